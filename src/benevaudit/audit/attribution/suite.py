"""The whole attribution audit of one fine-tuned model, writing its files into a run directory.

What a training run calls after fitting: the cue lexicon of the study's method (rollout) as
``cue_lexicon.json``, the second opinions (integrated gradients, log-odds from the training
data) beside it, their agreement, deletion faithfulness against a random control, and the
relevance of a few test dialogues for a heatmap. Returns flat metrics for ``metrics.json``.
Drawing the heatmap is the report's job (:mod:`benevaudit.audit.attribution.heatmap`), called by the
pipeline: the audit hands over the attributions and never imports the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.faithfulness import DEFAULT_KS, evaluate_faithfulness
from benevaudit.audit.attribution.logodds import logodds_lexicon, logodds_scores
from benevaudit.audit.attribution.overlap import agreement_metrics
from benevaudit.audit.attribution.store import AttributionCache
from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.attribution.words import attribute_dialogues, compute_lexicon
from benevaudit.audit.lexicon import Lexicon, save_lexicon
from benevaudit.encoders.spec import ModelSpec
from benevaudit.schema import Dialogue


@dataclass
class AttributionAudit:
    """What one model's attribution audit found, for the pipeline to log and draw."""

    lexicon: Lexicon                      # of the first method: ``cue_lexicon.json``
    metrics: dict[str, float]
    method: str                           # the method the shown relevance comes from
    shown: list[Dialogue]                 # the first ``heatmap_dialogues`` test dialogues
    attributions: list[DialogueAttribution]   # their relevance, in the same order


def run_attribution(model: Any, tokenizer: Any, train: Sequence[Dialogue],
                    test: Sequence[Dialogue], out_dir: str | Path, spec: AttributionSpec,
                    sequence: ModelSpec, seed: int, progress: bool = True,
                    faithfulness_ks: Sequence[int] = DEFAULT_KS) -> AttributionAudit:
    """Writes ``cue_lexicon.json``, ``cue_lexicon_<method>.json`` and ``faithfulness.png`` into
    ``out_dir``; returns the lexicon, metrics and the relevance of the dialogues to show.
    ``sequence`` is the classifier's ``model`` block: how much of a dialogue it reads."""
    out = Path(out_dir)
    cache = AttributionCache.for_model(spec.cache_dir, model) if spec.cache_dir else None
    lexicons: dict[str, Lexicon] = {}
    metrics: dict[str, float] = {}
    for method in spec.methods:
        res = compute_lexicon(model, tokenizer, test, method, spec.target, spec.top_k,
                              spec.min_count, spec.batch_size, sequence.max_length,
                              sequence.head_tokens, progress, spec.n_steps,
                              spec.max_batch_tokens, cache, spec.words_only)
        lexicons[method] = res.lexicon
        save_lexicon(res.lexicon, out / f"cue_lexicon_{method}.json")
        metrics[f"attribution/seconds_{method}"] = res.stats["seconds"]
    primary = lexicons[spec.methods[0]]
    save_lexicon(primary, out / "cue_lexicon.json")
    z = None
    if spec.logodds:
        lexicons["logodds"] = logodds_lexicon(train, spec.top_k, spec.min_count,
                                              words_only=spec.words_only).lexicon
        save_lexicon(lexicons["logodds"], out / "cue_lexicon_logodds.json")
        z = logodds_scores(train, min_count=spec.min_count)
    metrics.update(agreement_metrics(lexicons, k=spec.top_k))
    if spec.faithfulness_dialogues != 0:
        subset = list(test)[: spec.faithfulness_dialogues]
        faith = evaluate_faithfulness(model, tokenizer, subset, spec.methods, z, faithfulness_ks,
                                      seed, spec.batch_size, sequence.max_length,
                                      sequence.head_tokens, spec.n_steps,
                                      out / "faithfulness.png", progress, spec.max_batch_tokens,
                                      cache)
        metrics.update(faith.metrics)
    shown = list(test)[: spec.heatmap_dialogues]
    attrs = attribute_dialogues(model, tokenizer, shown, spec.methods[0], spec.target,
                                spec.batch_size, sequence.max_length, sequence.head_tokens,
                                False, spec.n_steps, spec.max_batch_tokens,
                                cache) if shown else []
    return AttributionAudit(primary, metrics, spec.methods[0], shown, attrs)
