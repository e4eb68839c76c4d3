"""The whole attribution audit of one fine-tuned model, computed and handed back.

What a training run calls after fitting: the cue lexicon of the study's method (rollout), for
``cue_lexicon.json``, the second opinions (integrated gradients, log-odds from the training
data) beside it, their agreement, deletion faithfulness against a random control, and the
relevance of a few test dialogues for a heatmap, with flat metrics for ``metrics.json``. The
audit writes nothing: ``benevaudit.outputs.attribution`` writes its lexicons and draws its
figures (the heatmap with :mod:`benevaudit.audit.attribution.heatmap`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.faithfulness import (DEFAULT_KS, FaithfulnessResult,
                                                      evaluate_faithfulness)
from benevaudit.audit.attribution.logodds import logodds_lexicon, logodds_scores
from benevaudit.audit.attribution.overlap import agreement_metrics
from benevaudit.audit.attribution.store import AttributionCache
from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.attribution.words import attribute_dialogues, compute_lexicon
from benevaudit.audit.lexicon import Lexicon
from benevaudit.encoders.spec import ModelSpec
from benevaudit.schema import Dialogue


@dataclass
class AttributionAudit:
    """What one model's attribution audit found, for the pipeline to log, write and draw."""

    lexicon: Lexicon                      # of the first method: ``cue_lexicon.json``
    metrics: dict[str, float]
    method: str                           # the method the shown relevance comes from
    shown: list[Dialogue]                 # the first ``heatmap_dialogues`` test dialogues
    attributions: list[DialogueAttribution]   # their relevance, in the same order
    # file name -> lexicon: cue_lexicon_<method>.json, cue_lexicon.json, cue_lexicon_logodds.json
    lexicons: dict[str, Lexicon]
    faithfulness: FaithfulnessResult | None = None    # its curves: faithfulness.png


def run_attribution(model: Any, tokenizer: Any, train: Sequence[Dialogue],
                    test: Sequence[Dialogue], spec: AttributionSpec,
                    sequence: ModelSpec, seed: int, progress: bool = True,
                    faithfulness_ks: Sequence[int] = DEFAULT_KS) -> AttributionAudit:
    """The lexicons (by the file each becomes), metrics, faithfulness curves and the relevance
    of the dialogues to show. ``sequence`` is the classifier's ``model`` block: how much of a
    dialogue it reads."""
    cache = AttributionCache.for_model(spec.cache_dir, model) if spec.cache_dir else None
    lexicons: dict[str, Lexicon] = {}
    files: dict[str, Lexicon] = {}
    metrics: dict[str, float] = {}
    for method in spec.methods:
        res = compute_lexicon(model, tokenizer, test, method, spec.target, spec.top_k,
                              spec.min_count, spec.batch_size, sequence.max_length,
                              sequence.head_tokens, progress, spec.n_steps,
                              spec.max_batch_tokens, cache, spec.words_only)
        lexicons[method] = res.lexicon
        files[f"cue_lexicon_{method}.json"] = res.lexicon
        metrics[f"attribution/seconds_{method}"] = res.stats["seconds"]
    primary = lexicons[spec.methods[0]]
    files["cue_lexicon.json"] = primary
    z = None
    if spec.logodds:
        lexicons["logodds"] = logodds_lexicon(train, spec.top_k, spec.min_count,
                                              words_only=spec.words_only).lexicon
        files["cue_lexicon_logodds.json"] = lexicons["logodds"]
        z = logodds_scores(train, min_count=spec.min_count)
    metrics.update(agreement_metrics(lexicons, k=spec.top_k))
    faith = None
    if spec.faithfulness_dialogues != 0:
        subset = list(test)[: spec.faithfulness_dialogues]
        faith = evaluate_faithfulness(model, tokenizer, subset, spec.methods, z, faithfulness_ks,
                                      seed, spec.batch_size, sequence.max_length,
                                      sequence.head_tokens, spec.n_steps, progress,
                                      spec.max_batch_tokens, cache)
        metrics.update(faith.metrics)
    shown = list(test)[: spec.heatmap_dialogues]
    attrs = attribute_dialogues(model, tokenizer, shown, spec.methods[0], spec.target,
                                spec.batch_size, sequence.max_length, sequence.head_tokens,
                                False, spec.n_steps, spec.max_batch_tokens,
                                cache) if shown else []
    return AttributionAudit(primary, metrics, spec.methods[0], shown, attrs, files, faith)
