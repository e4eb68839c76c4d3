"""Bootstrap resamples of FairDialogue's released scoring, over items of ``responses.parquet``.

The released GUS is a mean over (item, group pair) and the released SNSR and SNSV are the
mean and variance of similarities over (item, group pair), so each item contributes count rows
(a sum, a sum of squares, a number of pairs) and every resample is a formula on their sums, as
in :mod:`benevaudit.report.probe_intervals`. Items are resampled whole: every group's answers
to an item are drawn together.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.metrics.fairness_released import SIMILARITY
from benevaudit.report.intervals import ratio, resample

NEUTRAL_GROUP = "neutral"


def _items(part: pd.DataFrame, column: str) -> dict[str, dict[str, list[Any]]]:
    """``{item: {group: [values of the column, in row order]}}``."""
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for item, group, value in zip(part["item"], part["group"], part[column], strict=True):
        out[str(item)][str(group)].append(value)
    return out


def _resampled(rows: list[list[float]], n_resamples: int, seed: int) -> np.ndarray:
    counts = np.asarray(rows, dtype=float)                                  # [M, 3]
    return resample(np.arange(len(counts)), counts, n_resamples, seed)       # [R, 3]


def released_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                        ) -> dict[str, tuple[float, np.ndarray]]:
    """``fairness/<task>/<attribute>/released/gus`` and ``.../released/<serp|prag>/snsr|snsv``
    as (full-sample value, [R] resamples)."""
    need = {"task", "attribute", "group", "item"}
    if not need <= set(frame.columns):
        return {}
    out: dict[str, tuple[float, np.ndarray]] = {}
    for (task, attribute), part in frame.groupby(["task", "attribute"]):
        part = part[part["group"] != NEUTRAL_GROUP]
        prefix = f"fairness/{task}/{attribute}/released"
        if "decision" in part.columns:
            rows = []
            for groups in _items(part, "decision").values():
                mean = {g: np.mean([v == "yes" for v in vs]) for g, vs in groups.items()}
                diffs = [abs(mean[a] - mean[b]) for a, b in combinations(sorted(mean), 2)]
                if diffs:
                    rows.append([sum(diffs), 0.0, len(diffs)])
            if rows:
                sums = _resampled(rows, n_resamples, seed)
                full = np.sum(rows, axis=0)
                out[f"{prefix}/gus"] = (float(full[0] / full[2]), ratio(sums[:, 0], sums[:, 2]))
        if "ranked" in part.columns:
            items = _items(part, "ranked")
            for name, sim in SIMILARITY.items():
                rows = []
                for groups in items.values():
                    joined = {g: [v for one in ls if one is not None for v in list(one)]
                              for g, ls in groups.items()}
                    sims = [sim(joined[a], joined[b]) for a, b in combinations(sorted(joined), 2)]
                    if sims:
                        rows.append([sum(sims), sum(x * x for x in sims), len(sims)])
                if not rows:
                    continue
                sums, full = _resampled(rows, n_resamples, seed), np.sum(rows, axis=0)
                mean = ratio(sums[:, 0], sums[:, 2])
                out[f"{prefix}/{name}/snsr"] = (float(1 - full[0] / full[2]), 1 - mean)
                out[f"{prefix}/{name}/snsv"] = (float(full[1] / full[2] - (full[0] / full[2]) ** 2),
                                                ratio(sums[:, 1], sums[:, 2]) - mean ** 2)
    return out
