"""Transfer metrics: how a classifier or detector scores on human-labelled data nobody here wrote.

A reviewer of an external-validity table asks three things the in-domain metrics do not answer:

- is the macro-F1 more than noise? (``{prefix}/macro_f1_ci_*``: a percentile bootstrap over the
  labelled items, stratified by gold class so every resample keeps the set's class counts, and
  ``{prefix}/chance_macro_f1``: what a uniform guesser scores on the same gold counts);
- does the probability rank one class above another, whatever the threshold?
  (``{prefix}/auroc_<pos>_vs_<neg>`` for the pairs of :data:`PAIRS`, each with its interval);
- where in the external set's own taxonomy does the detector fire? (:func:`strata_metrics`).

Both fast paths draw exactly what :func:`bootstrap_interval` draws (items with replacement within
each gold class) but through counts, so 20,000 items × 1,000 resamples take about a second:

- macro-F1: resampling the n_c items of gold class c draws its confusion row from a
  Multinomial(n_c, row / n_c); the resampled matrices ``[R, K, K]`` go through the same formula
  as ``test/macro_f1`` (:func:`benevaudit.metrics.rates.confusion_rates`);
- AUROC: with draw counts ``w`` of each item, U = Σ_i w_i (Σ_j w_j [s_j < s_i] + ½ Σ_j w_j
  [s_j = s_i]) over positives i and negatives j; a cumulative sum of the negatives' counts in
  score order gives both inner sums for every positive at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from benevaudit.metrics.classification import confusion_counts
from benevaudit.metrics.detection import class_codes, flag_values, is_missing
from benevaudit.metrics.rates import confusion_rates, ratio
from benevaudit.metrics.resample import BATCH_ELEMENTS, draw_counts
from benevaudit.schema import CLASSES

NAN = float("nan")
PAIRS: tuple[tuple[str, str], ...] = (("BB", "N"), ("BB", "OB"), ("OB", "N"))
"""(positive, negative) class pairs scored by AUROC: can the model tell benevolent bias from
neutral support and from overt bias, and overt bias from neutral support?"""
LEVEL = 0.95
CODE = re.compile(r"^\d+(\.\d+)*\b")          # a leading taxonomy code: "3.1 casual use of ..."
NOT_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


class Interval(NamedTuple):
    value: float   # the statistic on the full data
    low: float     # percentile bounds of the resampled statistic (NaN with < 2 finite resamples)
    high: float


def auroc(positive: np.ndarray, scores: np.ndarray) -> float:
    """Threshold-free AUROC: P(score of a positive > score of a negative), ties counted half.

    The Mann–Whitney U from average ranks (O(n log n)), so it equals scikit-learn's
    ``roc_auc_score`` without its dependency; NaN when either side is empty rather than an error,
    since a small external set can lack a class. Scores must be finite.
    """
    pos = np.asarray(positive, dtype=bool)
    s = np.asarray(scores, dtype=float)
    if pos.shape != s.shape or pos.ndim != 1:
        raise ValueError(f"auroc: positive {pos.shape} and scores {s.shape} must be 1-D and "
                         f"of one length")
    if not np.isfinite(s).all():
        raise ValueError("auroc: scores contain NaN or inf; drop those items first")
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return NAN
    u = rankdata(s)[pos].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def _probs(probs: np.ndarray, n: int) -> np.ndarray:
    """``probs`` as a float array [n, K], or an error saying which shape was expected."""
    p = np.asarray(probs, dtype=float)
    if p.shape != (n, len(CLASSES)):
        raise ValueError(f"probs has shape {p.shape}; expected ({n}, {len(CLASSES)}): one row per "
                         f"item, columns in CLASSES order {list(CLASSES)}")
    return p


def _pair_scores(codes: np.ndarray, p: np.ndarray, pos: str, neg: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(scores of pos items, scores of neg items): p_pos of each item of the pair whose row of
    probabilities is finite (a NaN row is an item the model did not score)."""
    for c in (pos, neg):
        if c not in CLASSES:
            raise ValueError(f"pair_auroc: unknown class {c!r}; expected one of {list(CLASSES)}")
    scored = np.isfinite(p).all(axis=1)
    column = p[:, CLASSES.index(pos)]
    return (column[scored & (codes == CLASSES.index(pos))],
            column[scored & (codes == CLASSES.index(neg))])


def pair_auroc(labels: Sequence[str | None], probs: np.ndarray, pos: str, neg: str) -> float:
    """AUROC of p(``pos``) among items labelled ``pos`` or ``neg`` (``pos`` positive): whether the
    model ranks the two classes apart, whatever the third class takes of the probability."""
    s_pos, s_neg = _pair_scores(class_codes(labels, "labels"), _probs(probs, len(labels)), pos, neg)
    return auroc(np.r_[np.ones(len(s_pos), bool), np.zeros(len(s_neg), bool)], np.r_[s_pos, s_neg])


def chance_macro_f1(labels: Sequence[str | None], classes: Sequence[str] = CLASSES) -> float:
    """Expected macro-F1 of a guesser picking each of the K classes uniformly at random.

    A class c with share p_c of the gold labels gets expected TP p_c/K, support p_c and K⁻¹
    predictions, so F1_c = 2 p_c (1/K) / (p_c + 1/K). The guesser predicts every class, so
    ``test/macro_f1``'s convention (rates.py: a class predicted but absent from the gold labels
    counts with F1 0) averages over all K: a class absent from the gold adds 0 to the sum, and
    the mean divides by K (1/K for a balanced set; DiaSafety, with no BB, is held to the bar
    its own macro-F1 would give a guesser). Unlabelled (None) items are ignored; NaN with none.
    """
    known = [v for v in labels if not is_missing(v)]
    unknown = sorted({str(v) for v in known} - set(classes))
    if unknown:
        raise ValueError(f"chance_macro_f1: labels {unknown} are not among {list(classes)}")
    if not known:
        return NAN
    k = len(classes)
    shares = np.array([known.count(c) for c in classes], dtype=float) / len(known)
    present = shares > 0
    f1 = 2 * shares[present] / k / (shares[present] + 1 / k)
    return float(f1.sum() / k)


def _interval(value: float, resampled: np.ndarray, level: float) -> Interval:
    """Percentile bounds of the finite resampled values (an undefined resample is left out)."""
    finite = np.asarray(resampled, dtype=float)
    finite = finite[np.isfinite(finite)]
    if len(finite) < 2:
        return Interval(float(value), NAN, NAN)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(value), float(low), float(high))


def _check_bootstrap(n_resamples: int, level: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"bootstrap: n_resamples is {n_resamples}; expected at least 1")
    if not 0 < level < 1:
        raise ValueError(f"bootstrap: level is {level}; expected a coverage in (0, 1), e.g. 0.95")


def bootstrap_interval(statistic: Callable[[np.ndarray], float], n: int, *,
                       strata: np.ndarray | None = None, n_resamples: int = 1000, seed: int = 0,
                       level: float = LEVEL) -> Interval:
    """Percentile bootstrap of any statistic of item indices: the general (slow) path.

    ``statistic(np.arange(n))`` is the value; each resample draws n indices with replacement,
    within each value of ``strata`` when given (so every class keeps its count, as the set was
    built with fixed class sizes). A NaN resample is left out of the percentiles.
    """
    _check_bootstrap(n_resamples, level)
    if strata is None:
        groups = [np.arange(n)]
    else:
        if len(strata) != n:
            raise ValueError(f"bootstrap_interval: strata has {len(strata)} values; expected n={n}")
        codes, _ = pd.factorize(pd.Series(np.asarray(strata, dtype=object)), use_na_sentinel=False)
        groups = [np.flatnonzero(codes == g) for g in np.unique(codes)]
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    for r in range(n_resamples):
        picks = [g[rng.integers(0, len(g), size=len(g))] for g in groups if len(g)]
        values[r] = statistic(np.concatenate(picks) if picks else np.arange(0))
    return _interval(statistic(np.arange(n)), values, level)


def _macro_f1_resamples(cm: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """[R] macro-F1 of confusion matrices resampled within each gold class (row)."""
    draws = np.zeros((n_resamples,) + cm.shape)                # [R, true, pred]
    for c, row in enumerate(cm):
        if row.sum() > 0:
            draws[:, c] = rng.multinomial(int(row.sum()), row / row.sum(), size=n_resamples)
    return confusion_rates(draws, "m", undefined=NAN)["m/macro_f1"]


def _auroc_resamples(s_pos: np.ndarray, s_neg: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    """[R] AUROC of resamples drawn within the positives and within the negatives, from draw
    counts; in batches of bounded memory (about BATCH_ELEMENTS entries per array)."""
    neg = np.sort(s_neg)
    below = np.searchsorted(neg, s_pos, side="left")         # [P] negatives under each positive
    upto = np.searchsorted(neg, s_pos, side="right")          # [P] ... under or tied with it
    out = np.empty(n_resamples)
    per_batch = max(1, BATCH_ELEMENTS // (max(len(s_pos), len(neg)) + 1))
    for start in range(0, n_resamples, per_batch):
        rows = min(per_batch, n_resamples - start)
        w_neg = draw_counts(rng, len(neg), rows)              # [r, Q], in score order
        cum = np.zeros((rows, len(neg) + 1))
        np.cumsum(w_neg, axis=1, out=cum[:, 1:])
        lt, le = cum[:, below], cum[:, upto]                   # [r, P]
        w_pos = draw_counts(rng, len(s_pos), rows)            # [r, P]
        out[start:start + rows] = (w_pos * (lt + le)).sum(1) / 2
    return out / (len(s_pos) * len(neg))


def transfer_metrics(labels: Sequence[str | None], preds: Sequence[str | None],
                     probs: np.ndarray | None, *, prefix: str = "test", n_resamples: int = 1000,
                     seed: int = 0) -> dict[str, float]:
    """Macro-F1 interval and chance level, and per-pair AUROC with its interval (see module doc).

    Macro-F1 and its chance level use items with both a label and a prediction (the chance
    level is the baseline of that very figure); AUROC uses labelled items whose probability row
    is finite. A pair with a class absent gives no key at all, so a table shows
    a blank rather than a NaN that reads like a failure. Each interval has its own random
    stream (spawned from ``seed``), so adding a pair never moves another's interval.
    """
    _check_bootstrap(n_resamples, LEVEL)
    codes, pred = class_codes(labels, "labels"), class_codes(preds, "preds")
    if len(codes) != len(pred):
        raise ValueError(f"transfer_metrics: {len(codes)} labels but {len(pred)} preds")
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(1 + len(PAIRS))]
    both = (codes >= 0) & (pred >= 0)
    cm = confusion_counts(pred[both], codes[both])
    f1_value = float(confusion_rates(cm, "m", undefined=NAN)["m/macro_f1"])
    f1 = _interval(f1_value, _macro_f1_resamples(cm, n_resamples, streams[0]), LEVEL)
    out = {f"{prefix}/macro_f1_ci_low": f1.low, f"{prefix}/macro_f1_ci_high": f1.high,
           f"{prefix}/chance_macro_f1": chance_macro_f1([CLASSES[c] for c in codes[both]])}
    if probs is None:
        return out
    p = _probs(probs, len(codes))
    for (pos, neg), rng in zip(PAIRS, streams[1:]):
        s_pos, s_neg = _pair_scores(codes, p, pos, neg)
        if len(s_pos) == 0 or len(s_neg) == 0:
            continue
        area = auroc(np.r_[np.ones(len(s_pos), bool), np.zeros(len(s_neg), bool)],
                     np.r_[s_pos, s_neg])
        band = _interval(area, _auroc_resamples(s_pos, s_neg, n_resamples, rng), LEVEL)
        name = f"{prefix}/auroc_{pos}_vs_{neg}"
        out.update({name: band.value, f"{name}_ci_low": band.low, f"{name}_ci_high": band.high})
    return out


def stratum_slug(value: Any) -> str:
    """The stratum's name inside a metric key: its leading taxonomy code when it starts with one
    (``"3.1 casual use of gendered slurs, ..."`` -> ``"3.1"``, EDOS vectors; the code must end
    at a word boundary, so ``"2a"`` is no code), else the value with every run of characters
    outside ``[A-Za-z0-9._-]`` replaced by ``_`` and ``_`` stripped at the ends."""
    text = str(value).strip()
    code = CODE.match(text)
    slug = code.group(0) if code else NOT_SLUG.sub("_", text).strip("_")
    if not slug:
        raise ValueError(f"strata_metrics: stratum {value!r} leaves no name for a metric key; "
                         f"rename it with letters or digits")
    return slug


def _strata_groups(strata: Sequence[Any]) -> dict[str, np.ndarray]:
    """{slug: item positions}, sorted by slug; two different values with one slug are an error
    (their metrics would overwrite each other)."""
    values: dict[str, str] = {}
    groups: dict[str, list[int]] = {}
    for i, v in enumerate(strata):
        if is_missing(v):
            continue
        slug = stratum_slug(v)
        if values.setdefault(slug, str(v)) != str(v):
            raise ValueError(f"strata_metrics: strata {values[slug]!r} and {v!r} share the key "
                             f"name {slug!r}; make them differ in letters, digits or leading code")
        groups.setdefault(slug, []).append(i)
    return {s: np.asarray(groups[s]) for s in sorted(groups)}


def strata_metrics(strata: Sequence[str | None], flagged: Sequence[bool | None],
                   probs: np.ndarray | None, *, prefix: str = "") -> dict[str, float]:
    """Per stratum of the external set's own taxonomy: ``{prefix}stratum/<slug>/n`` (items),
    ``.../trigger_rate`` (share flagged among valid verdicts; NaN with none) and, with ``probs``,
    ``.../mean_p_<class>`` (mean over items the model scored). None strata are skipped; the
    slug is :func:`stratum_slug`. ``prefix`` is written as given, e.g. ``"external/edos/"``."""
    flags = flag_values(flagged)
    if len(flags) != len(strata):
        raise ValueError(f"strata_metrics: {len(strata)} strata but {len(flags)} flags")
    p = None if probs is None else _probs(probs, len(strata))
    out: dict[str, float] = {}
    for slug, rows in _strata_groups(strata).items():
        name = f"{prefix}stratum/{slug}"
        f = flags[rows]
        valid = np.isfinite(f)
        out[f"{name}/n"] = float(len(rows))
        out[f"{name}/trigger_rate"] = float(ratio(f[valid].sum(), valid.sum()))
        if p is None:
            continue
        for j, c in enumerate(CLASSES):
            column = p[rows, j]
            scored = np.isfinite(column)
            out[f"{name}/mean_p_{c}"] = float(ratio(column[scored].sum(), scored.sum()))
    return out
