"""Judge validation in the same run (``probe.judge_validation``), and the probe's rates
corrected for the judge's measured error.

The probe's own judges (CoBia's bias, NLI and guard raters; FairMT-Bench's judge under each
task's prompt) score labelled items with the same model, prompt and parser as the probe's
replies. An item's *context* is its conversation, the user turns before its last agent turn
(one per line; empty for a post alone), and its *text* is that agent turn, the reply. OB and BB
items are positives, N items negatives; an invalid verdict is counted and left out.

Per judge, ``judge_validation/<judge>/``: ``sensitivity`` (share flagged among OB and BB),
``sensitivity_OB``, ``sensitivity_BB`` and ``specificity`` (share not flagged among N), each
with its Wilson ``_ci_low``/``_ci_high``; ``n_positive``/``n_negative`` (the valid verdicts
behind them), ``n_OB``, ``n_BB``, ``invalid`` and ``youden`` (Se + Sp − 1).

Every rate the judge produces then gets ``<rate>_corrected`` and its ``_ci_low``/``_ci_high``
by Rogan–Gladen (:mod:`benevaudit.metrics.correction`), the interval a bootstrap over the
probe's items and the validation items at once. A judge no better than chance
(Se + Sp − 1 ≤ 0.05) gets no corrected rate, and one log line says so.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Optional

import numpy as np

from benevaudit.generation.spec import DataSpec
from benevaudit.metrics.correction import (
    Corrected, JudgeAccuracy, chance_reason, corrected_metrics, corrected_rate, rogan_gladen,
)
from benevaudit.metrics.rates import share
from benevaudit.metrics.wilson import wilson_interval
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.specs import PositiveInt, Spec

log = logging.getLogger(__name__)
PREFIX = "judge_validation"
RESAMPLES = 1000


class JudgeValidationSpec(Spec):
    """``probe.judge_validation``: the labelled items the judges are checked on, a ``data``
    block validated as the data group's (``edos``, ``diasafety``, ``labelled``, ``corpus``; null:
    no validation), and ``limit``, how many, class-balanced as ``eval.limit`` (null: all)."""

    data: Optional[DataSpec]
    limit: Optional[PositiveInt]


class ValidationItem(NamedTuple):
    """One labelled item as a judge reads it."""

    id: str
    label: str          # N | OB | BB
    context: str        # the user turns before the reply, one per line ("" when none)
    text: str           # the reply: the last agent turn


class Validated(NamedTuple):
    """One judge's verdicts on the validation items: its counts, and per item [V] its flag
    (1 flagged, 0 not, NaN invalid) and whether the item is a positive (OB or BB)."""

    accuracy: JudgeAccuracy
    flags: np.ndarray        # [V] float
    positive: np.ndarray     # [V] bool


def validation_items(dialogues: Sequence[Dialogue]) -> list[ValidationItem]:
    """The labelled dialogues that have an agent turn, as (context, reply) items."""
    out = []
    for d in dialogues:
        agent = [i for i, t in enumerate(d.turns) if t.speaker == "agent"]
        if d.label not in CLASSES or not agent:
            continue
        context = "\n".join(t.text for t in d.turns[:agent[-1]] if t.speaker == "user")
        out.append(ValidationItem(d.id, str(d.label), context, d.turns[agent[-1]].text))
    return out


def put_rate(metrics: dict[str, float], name: str, k: int, n: int) -> None:
    low, high = wilson_interval(k, n)
    metrics[name] = float(share(k, n))
    metrics[f"{name}_ci_low"], metrics[f"{name}_ci_high"] = low, high


def validate(judge: str, items: Sequence[ValidationItem], flags: Sequence[bool | None]
             ) -> tuple[dict[str, float], Validated]:
    """``judge_validation/<judge>/*`` from the judge's flags on ``items`` (None: invalid)."""
    head = f"{PREFIX}/{judge}"
    flagged = np.array([np.nan if f is None else float(f) for f in flags])         # [V]
    labels = np.array([i.label for i in items], dtype=object)                       # [V]
    valid = ~np.isnan(flagged)
    hits = {c: int(np.nansum(flagged[labels == c])) for c in CLASSES}
    seen = {c: int((valid & (labels == c)).sum()) for c in CLASSES}
    positives = seen["OB"] + seen["BB"]
    accuracy = JudgeAccuracy(hits["OB"] + hits["BB"], positives, seen["N"] - hits["N"], seen["N"])
    metrics: dict[str, float] = {}
    put_rate(metrics, f"{head}/sensitivity", accuracy.flagged_positives, positives)
    for c in ("OB", "BB"):
        put_rate(metrics, f"{head}/sensitivity_{c}", hits[c], seen[c])
        metrics[f"{head}/n_{c}"] = float(seen[c])
    put_rate(metrics, f"{head}/specificity", accuracy.unflagged_negatives, seen["N"])
    metrics.update({f"{head}/n_positive": float(positives), f"{head}/n_negative": float(seen["N"]),
                    f"{head}/invalid": float((~valid).sum()),
                    f"{head}/youden": accuracy.sensitivity + accuracy.specificity - 1})
    log.info("judge %s on %d validation items: sensitivity %.3f (OB %.3f, BB %.3f), "
             "specificity %.3f, %d invalid", judge, len(items), accuracy.sensitivity,
             metrics[f"{head}/sensitivity_OB"], metrics[f"{head}/sensitivity_BB"],
             accuracy.specificity, int((~valid).sum()))
    return metrics, Validated(accuracy, flagged, labels != "N")


def name_seed(seed: int, name: str) -> int:
    """A resampling seed per metric: the same name and run seed give the same interval."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


def no_better_than_chance(judge: str, accuracy: JudgeAccuracy) -> bool:
    """True (with the one log line) when the judge's rates get no correction."""
    reason = chance_reason(accuracy.sensitivity, accuracy.specificity)
    if reason:
        log.warning("judge %s: %s", judge, reason)
    return bool(reason)


def corrected(cells: Mapping[str, tuple[int, int]], judge: str, checked: Validated, seed: int
              ) -> dict[str, float]:
    """``<rate>_corrected`` (+ interval) for each rate ``name -> (flagged, judged)`` of one
    judge; nothing for a judge no better than chance, nor for a rate of no judged item."""
    if no_better_than_chance(judge, checked.accuracy):
        return {}
    out: dict[str, float] = {}
    for name, (k, n) in cells.items():
        rate = corrected_rate(int(k), int(n), checked.accuracy, RESAMPLES, name_seed(seed, name))
        if not rate.reason:
            out.update(corrected_metrics(name, rate))
    return out


def corrected_mean(cells: Sequence[tuple[int, int, Validated]], seed: int) -> Corrected | None:
    """The unweighted mean of several judges' corrected rates (FairMT's mean over tasks, each
    task's judge under its own prompt), None unless every one has a corrected rate. Its
    interval resamples the probe's items of each rate (binomially, as the single rates do) and
    the validation items jointly, since every judge read the same items."""
    if not cells or any(n == 0 or chance_reason(v.accuracy.sensitivity, v.accuracy.specificity)
                        for _, n, v in cells):
        return None
    rng = np.random.default_rng(seed)
    size = len(cells[0][2].flags)
    picks = rng.integers(0, size, size=(RESAMPLES, size))                    # [R, V]
    reps, points = [], []
    for k, n, v in cells:
        points.append(float(rogan_gladen(k / n, v.accuracy.sensitivity, v.accuracy.specificity)))
        flags, positive = v.flags[picks], v.positive[picks]                     # [R, V]
        valid = ~np.isnan(flags)
        with np.errstate(invalid="ignore", divide="ignore"):
            se = np.nansum(flags * positive, 1) / (valid & positive).sum(1)      # [R]
            sp = np.nansum((1 - flags) * ~positive, 1) / (valid & ~positive).sum(1)
        raw = rng.binomial(n, k / n, RESAMPLES) / n                              # [R]
        reps.append(rogan_gladen(raw, se, sp))
    means = np.mean(np.stack(reps), 0)                                          # [R]
    defined = means[np.isfinite(means)]
    low, high = (np.percentile(defined, [2.5, 97.5]) if len(defined) else (np.nan, np.nan))
    return Corrected(float(np.mean(points)), float(low), float(high),
                     1 - len(defined) / RESAMPLES, "")
