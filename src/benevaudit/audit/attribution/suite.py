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

from benevaudit.audit.attribution.overlap import agreement_metrics
from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.faithfulness import DEFAULT_KS, evaluate_faithfulness
from benevaudit.audit.attribution.logodds import logodds_lexicon, logodds_scores
from benevaudit.audit.attribution.store import AttributionCache
from benevaudit.audit.attribution.words import (
    METHODS, attribute_dialogues, batch_token_cap, compute_lexicon,
)
from benevaudit.audit.lexicon import Lexicon, save_lexicon
from benevaudit.errors import ConfigError
from benevaudit.schema import CLASSES, SPLITS, Dialogue


@dataclass
class AttributionOptions:
    """Plain values a pipeline fills from its config (``attribution:`` group)."""

    methods: tuple[str, ...] = ("rollout", "integrated_gradients")  # first one -> cue_lexicon.json
    target: str = "true"
    top_k: int = 50
    min_count: int = 3
    words_only: bool = True             # punctuation marks never enter a lexicon
    batch_size: int = 16
    max_batch_tokens: int | str | None = "auto"   # see words.batch_token_cap
    max_length: int = 512
    head_tokens: int = 128
    n_steps: int = 50
    logodds: bool = True
    faithfulness_dialogues: int | None = 200   # None = the whole test split; 0 = skip
    faithfulness_ks: tuple[int, ...] = DEFAULT_KS
    heatmap_dialogues: int = 6          # attributed for the report to draw
    seed: int = 42
    progress: bool = True
    cache_dir: str | Path | None = None   # keep finished batches here (resumable); None = off


@dataclass
class AttributionAudit:
    """What one model's attribution audit found, for the pipeline to log and draw."""

    lexicon: Lexicon                      # of the first method: ``cue_lexicon.json``
    metrics: dict[str, float]
    method: str                           # the method the shown relevance comes from
    shown: list[Dialogue]                 # the first ``heatmap_dialogues`` test dialogues
    attributions: list[DialogueAttribution]   # their relevance, in the same order


def run_attribution(model: Any, tokenizer: Any, train: Sequence[Dialogue],
                    test: Sequence[Dialogue], out_dir: str | Path,
                    options: AttributionOptions | None = None) -> AttributionAudit:
    """Writes ``cue_lexicon.json``, ``cue_lexicon_<method>.json`` and ``faithfulness.png`` into
    ``out_dir``; returns the lexicon, metrics and the relevance of the dialogues to show."""
    o = options or AttributionOptions()
    out = Path(out_dir)
    cache = AttributionCache.for_model(o.cache_dir, model) if o.cache_dir else None
    kw = dict(target=o.target, batch_size=o.batch_size, max_length=o.max_length,
              head_tokens=o.head_tokens, progress=o.progress, n_steps=o.n_steps,
              max_batch_tokens=o.max_batch_tokens, cache=cache)
    lexicons: dict[str, Lexicon] = {}
    metrics: dict[str, float] = {}
    for method in o.methods:
        res = compute_lexicon(model, tokenizer, test, method=method, top_k=o.top_k,
                              min_count=o.min_count, words_only=o.words_only, **kw)
        lexicons[method] = res.lexicon
        save_lexicon(res.lexicon, out / f"cue_lexicon_{method}.json")
        metrics[f"attribution/seconds_{method}"] = res.stats["seconds"]
    primary = lexicons[o.methods[0]]
    save_lexicon(primary, out / "cue_lexicon.json")
    z = None
    if o.logodds:
        lexicons["logodds"] = logodds_lexicon(train, o.top_k, o.min_count,
                                              words_only=o.words_only).lexicon
        save_lexicon(lexicons["logodds"], out / "cue_lexicon_logodds.json")
        z = logodds_scores(train, min_count=o.min_count)
    metrics.update(agreement_metrics(lexicons, k=o.top_k))
    if o.faithfulness_dialogues != 0:
        subset = list(test)[: o.faithfulness_dialogues]
        faith = evaluate_faithfulness(model, tokenizer, subset, o.methods, z, o.faithfulness_ks,
                                      o.seed, o.batch_size, o.max_length, o.head_tokens,
                                      o.n_steps, out / "faithfulness.png", o.progress,
                                      o.max_batch_tokens, cache)
        metrics.update(faith.metrics)
    shown = list(test)[: o.heatmap_dialogues]
    attrs = attribute_dialogues(model, tokenizer, shown, o.methods[0], progress=False,
                                **{k: v for k, v in kw.items() if k != "progress"}) if shown else []
    return AttributionAudit(primary, metrics, o.methods[0], shown, attrs)


def check_attribution(attribution: dict[str, Any]) -> None:
    """Fail before any training on an attribution setting that could only fail after it."""
    if not attribution["enabled"]:
        return
    methods = list(attribution["methods"] or [])
    bad = [m for m in methods if m not in METHODS]
    if not methods or bad:
        raise ConfigError(f"attribution.methods must list one or more of {list(METHODS)}, "
                          f"got {methods}")
    target = str(attribution["target"])
    if target not in ("true", "predicted", *CLASSES):
        raise ConfigError(f"attribution.target must be one of "
                          f"{['true', 'predicted', *CLASSES]}, got {target!r}")
    if attribution["split"] not in SPLITS:
        raise ConfigError(f"attribution.split must be one of {list(SPLITS)}, "
                          f"got {attribution['split']!r}")
    for key in ("top_k", "batch_size", "n_steps", "min_count"):
        value = attribution[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"attribution.{key} must be a positive integer, got {value!r}")
    batch_token_cap(attribution["max_batch_tokens"], "cpu")
