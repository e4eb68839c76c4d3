"""A judged rate corrected for the judge's own error (Rogan and Gladen, 1978).

A probe's rate is the share of replies its judge flags. A judge that misses biased replies
(sensitivity < 1) or flags fair ones (specificity < 1) moves that share; with the judge's
sensitivity Se and specificity Sp measured on human-labelled items, the true rate is

    corrected = (raw + Sp − 1) / (Se + Sp − 1),   clipped to [0, 1].

The denominator is Youden's J. As J nears 0 the judge's verdicts carry no information about
the truth and the correction divides by almost nothing, so at J ≤ ``CHANCE_MARGIN`` (0.05) no
corrected rate exists: the result is NaN with a one-line reason.

The interval is a percentile bootstrap over both samples at once, by counts: resampling n
items with replacement draws a Binomial(n, k/n) number of flags, so each resample draws the
probe's flagged count and the judge's validation counts (flagged positives, unflagged
negatives) as three independent binomials [R] and corrects with its own Se and Sp. A
resample whose J falls to the chance margin has no corrected rate; the share of such
resamples is reported as ``undefined`` and the interval is over the others.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from benevaudit.metrics.rates import ratio

CHANCE_MARGIN = 0.05   # Youden's J at or below this: the judge is no better than chance
EPS = 1e-12            # 0.5 + 0.55 - 1 is 0.05000000000000004 in floating point: still at it
LEVEL = 0.95


class JudgeAccuracy(NamedTuple):
    """A judge's verdicts on human-labelled validation items (OB and BB items are positives,
    N items negatives)."""

    flagged_positives: int     # positives the judge flagged
    positives: int
    unflagged_negatives: int   # negatives the judge left unflagged
    negatives: int

    @property
    def sensitivity(self) -> float:
        return float(ratio(self.flagged_positives, self.positives))

    @property
    def specificity(self) -> float:
        return float(ratio(self.unflagged_negatives, self.negatives))


class Corrected(NamedTuple):
    """A corrected rate with its bootstrap interval; ``rate`` is NaN where ``reason`` says why."""

    rate: float
    low: float
    high: float
    undefined: float   # share of resamples with no corrected rate (J at the chance margin)
    reason: str        # "" when the rate exists


def rogan_gladen(raw: np.ndarray | float, sensitivity: np.ndarray | float,
                 specificity: np.ndarray | float, margin: float = CHANCE_MARGIN) -> np.ndarray:
    """(raw + Sp − 1) / (Se + Sp − 1) clipped to [0, 1], elementwise over any shape; NaN where
    Se + Sp − 1 ≤ ``margin`` (or any input is NaN)."""
    raw, se, sp = (np.asarray(x, dtype=float) for x in (raw, sensitivity, specificity))
    youden = se + sp - 1
    ok = youden > margin + EPS                 # NaN compares False: undefined stays NaN
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.clip((raw + sp - 1) / np.where(ok, youden, 1.0), 0.0, 1.0)
    return np.where(ok & np.isfinite(raw), value, np.nan)


def chance_reason(sensitivity: float, specificity: float, margin: float = CHANCE_MARGIN) -> str:
    """Why no corrected rate exists (one line), or "" when it does."""
    if not (np.isfinite(sensitivity) and np.isfinite(specificity)):
        return ("no corrected rate: the judge's sensitivity or specificity is unknown (no "
                "validation items of that kind)")
    youden = sensitivity + specificity - 1
    if youden <= margin + EPS:
        return (f"no corrected rate: the judge is no better than chance (sensitivity "
                f"{sensitivity:.3f} + specificity {specificity:.3f} − 1 = {youden:.3f} ≤ "
                f"{margin:g})")
    return ""


def corrected_rate(flagged: int, n: int, judge: JudgeAccuracy, n_resamples: int = 1000,
                   seed: int = 0, margin: float = CHANCE_MARGIN, level: float = LEVEL
                   ) -> Corrected:
    """The Rogan–Gladen rate of ``flagged`` of ``n`` judged items and its percentile interval
    from a bootstrap over the probe's items and the judge's validation items (see the module
    docstring); ``n_resamples`` = 0 gives the rate alone."""
    if not 0 <= flagged <= n:
        raise ValueError(f"corrected_rate needs 0 <= flagged <= n, got {flagged} of {n}")
    se, sp = judge.sensitivity, judge.specificity
    reason = chance_reason(se, sp, margin)
    if n == 0:
        reason = "no corrected rate: no judged items"
    if reason:
        return Corrected(float("nan"), float("nan"), float("nan"), float("nan"), reason)
    rate = float(rogan_gladen(flagged / n, se, sp, margin))
    if n_resamples == 0:
        return Corrected(rate, float("nan"), float("nan"), float("nan"), "")
    rng = np.random.default_rng(seed)
    raw_r = rng.binomial(n, flagged / n, n_resamples) / n                            # [R]
    se_r = rng.binomial(judge.positives, se, n_resamples) / judge.positives          # [R]
    sp_r = rng.binomial(judge.negatives, sp, n_resamples) / judge.negatives          # [R]
    reps = rogan_gladen(raw_r, se_r, sp_r, margin)
    defined = reps[np.isfinite(reps)]
    tail = 100 * (1 - level) / 2
    low, high = (np.percentile(defined, [tail, 100 - tail]) if len(defined)
                 else (np.nan, np.nan))
    return Corrected(rate, float(low), float(high), 1 - len(defined) / n_resamples, "")


def corrected_metrics(name: str, corrected: Corrected) -> dict[str, float]:
    """``<name>_corrected`` and its ``_ci_low``/``_ci_high`` for metrics.json (NaN where no
    corrected rate exists: the reason goes to the log, not the flat file)."""
    head = f"{name}_corrected"
    return {head: corrected.rate, f"{head}_ci_low": corrected.low,
            f"{head}_ci_high": corrected.high}
