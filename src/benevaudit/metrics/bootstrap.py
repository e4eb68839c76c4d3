"""Bootstrap stability of trigger rates: how small can an evaluation set be before TR_BB wobbles?

The study's Figure 5. From a pool (by default 20% of the corpus) we draw evaluation sets of
0.5% to 20% of the corpus, 1,000 times each, and report each class's mean trigger rate with its
2.5–97.5 percentile band. Draws are whole matched triplets (the N, OB and BB dialogues of one
condition: same demographics, role and generator), as an evaluation set is built, so the three
classes of a draw share their conditions and the gap between them is not inflated by sampling
different people for each class.

Vectorised through :mod:`benevaudit.metrics.resample`, the engine the report's intervals use
too, two exact ways to draw the same thing. Per-triplet counts form a small matrix
``C`` [T, 2·K] (flagged and valid dialogues per class); a resample's sums are ``draws @ C``,
where ``draws`` [T] says how often each triplet was drawn.

- ``index``: draw triplet indices [R, k] with ``rng.integers``; ``bincount`` over row-offset
  indices gives ``draws`` for a batch of R resamples at once. Cost grows with R·k.
- ``types``: triplets with the same counts row are interchangeable, and a real pool has few
  distinct rows (27 for complete triplets: each class flagged, not flagged or invalid). Drawing
  k triplets uniformly with replacement draws each distinct row a Multinomial(k, share of the
  pool) number of times, so ``rng.multinomial`` gives the same distribution at a cost that
  grows with R·U, U the number of distinct rows, not with the evaluation size.

``auto`` takes ``types`` when U is small next to the evaluation size. 12 sizes × 1,000
resamples over a 72,576-dialogue pool take well under a second that way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from benevaudit.metrics.detection import class_codes, flag_values
from benevaudit.metrics.rates import ratio
from benevaudit.metrics.resample import (
    distinct_rows, pick_method, resample_sums, type_resample_sums,
)
from benevaudit.schema import CLASSES

FRACTIONS: tuple[float, ...] = (0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.125, 0.15,
                                0.175, 0.2)
"""The study's evaluation sizes, as fractions of the corpus."""


def triplet_counts(frame: pd.DataFrame) -> np.ndarray:
    """[T, 2·K] per triplet: flagged dialogues of each class, then valid dialogues of each class.

    Invalid verdicts (flagged None/NaN) and unlabelled dialogues count in neither, so each
    resample's rate is over its valid dialogues, as in :func:`detection_metrics`.
    """
    missing = [c for c in ("label", "flagged", "triplet") if c not in frame.columns]
    if missing:
        raise ValueError(f"bootstrap: the frame lacks column(s) {missing}; expected "
                         f"'label', 'flagged' and 'triplet' (the matched-triplet key)")
    labels = class_codes(list(frame["label"]), "labels")
    flags = flag_values(list(frame["flagged"]))
    keys = frame["triplet"].map(lambda k: k if isinstance(k, (str, int)) else repr(k))
    triplet, _ = pd.factorize(keys, sort=True)            # [n] triplet index per dialogue
    k = len(CLASSES)
    counts = np.zeros((triplet.max() + 1 if len(triplet) else 0, 2 * k))
    ok = (labels >= 0) & ~np.isnan(flags)
    np.add.at(counts, (triplet[ok], labels[ok]), flags[ok])      # flagged per class
    np.add.at(counts, (triplet[ok], k + labels[ok]), 1.0)        # valid per class
    return counts


def _check(fractions: Sequence[float], n_resamples: int, pool_fraction: float) -> None:
    if not 0 < pool_fraction <= 1:
        raise ValueError(f"bootstrap: pool_fraction must be in (0, 1], got {pool_fraction}")
    if n_resamples < 1:
        raise ValueError(f"bootstrap: n_resamples must be at least 1, got {n_resamples}")
    bad = [f for f in fractions if not 0 < f <= 1]
    if bad:
        raise ValueError(f"bootstrap: fractions must be in (0, 1], got {bad}")


def bootstrap_trigger_rates(frame: pd.DataFrame, fractions: Sequence[float] = FRACTIONS,
                            n_resamples: int = 1000, seed: int = 0, pool_fraction: float = 0.2,
                            corpus_size: int | None = None, method: str = "auto") -> pd.DataFrame:
    """Mean trigger rate and 95% percentile band per evaluation size and true class.

    ``frame`` is the pool: one row per dialogue with ``label``, ``flagged`` (None = invalid)
    and ``triplet``. ``corpus_size`` converts fractions into dialogues; by default the pool is
    taken to be ``pool_fraction`` of the corpus. An evaluation set of fraction f holds
    round(f · corpus_size / d) triplets, d the pool's mean dialogues per triplet (3 when
    every triplet is complete). Each size gets its own seeded stream, so adding a size leaves
    the others unchanged. Returns one row per (fraction, class): fraction, n_triplets,
    n_dialogues, class, mean, low, high, pool_rate, and the share of resamples in which the
    class had no valid dialogue (``undefined``). ``method`` is ``auto``, ``types`` or
    ``index`` (see the module docstring); both draw from the same distribution.
    """
    _check(fractions, n_resamples, pool_fraction)
    counts = triplet_counts(frame)
    if counts.shape[0] == 0:
        raise ValueError("bootstrap: the pool is empty")
    k = len(CLASSES)
    corpus = corpus_size if corpus_size is not None else len(frame) / pool_fraction
    per_triplet = len(frame) / counts.shape[0]
    totals = counts.sum(0)
    pool_rates = ratio(totals[:k], totals[k:])
    types, share = distinct_rows(counts)
    pick_method(method, len(types), 1)  # an unknown method fails before any work
    rows = []
    streams = np.random.SeedSequence(seed).spawn(len(fractions))
    for fraction, stream in zip(fractions, streams):
        size = max(1, round(fraction * corpus / per_triplet))
        rng = np.random.default_rng(stream)
        if pick_method(method, len(types), size) == "types":
            sums = type_resample_sums(types, share, size, n_resamples, rng)
        else:
            sums = resample_sums(counts, size, n_resamples, rng)
        rates = ratio(sums[:, :k], sums[:, k:])                       # [R, K], NaN: no valid
        for c, name in enumerate(CLASSES):
            r = rates[:, c][~np.isnan(rates[:, c])]
            low, high = np.percentile(r, [2.5, 97.5]) if len(r) else (np.nan, np.nan)
            rows.append({"fraction": float(fraction), "n_triplets": size,
                         "n_dialogues": round(size * per_triplet), "class": name,
                         "mean": float(r.mean()) if len(r) else np.nan,
                         "low": float(low), "high": float(high),
                         "pool_rate": float(pool_rates[c]),
                         "undefined": 1 - len(r) / n_resamples})
    return pd.DataFrame(rows)


def bootstrap_metrics(table: pd.DataFrame) -> dict[str, float]:
    """Flat names for metrics.json: ``bootstrap/<class>/<percent>/{mean,low,high}``."""
    out: dict[str, float] = {}
    for row in table.to_dict("records"):
        head = f"bootstrap/TR_{row['class']}/{100 * row['fraction']:g}pct"
        for key in ("mean", "low", "high"):
            out[f"{head}/{key}"] = float(row[key])
    return out
