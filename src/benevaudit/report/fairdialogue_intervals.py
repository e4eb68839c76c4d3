"""Bootstrap resamples of FairDialogue's released scoring, over items of ``responses.parquet``.

The released GUS is a mean over (item, group pair) and the released SNSR and SNSV are the
mean and variance of similarities over (item, group pair), so each item contributes count rows
(a sum, a sum of squares, a number of pairs: :func:`gus_rows`, :func:`sns_rows`) and every
resample is the released formula on their sums, as ``metrics.json``'s value is. Items are
resampled whole: every group's answers to an item are drawn together.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.metrics.fairness_released import SIMILARITY, gus_rows, sns_rows
from benevaudit.metrics.rates import mean_and_variance
from benevaudit.metrics.resample import resample

NEUTRAL_GROUP = "neutral"


def _items(part: pd.DataFrame, column: str) -> dict[str, dict[str, list[Any]]]:
    """``{item: {group: [values of the column, in row order]}}``."""
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for item, group, value in zip(part["item"], part["group"], part[column], strict=True):
        out[str(item)][str(group)].append(value)
    return out


def _replicates(rows: np.ndarray, n_resamples: int, seed: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(full mean, full variance, [R] means, [R] variances) of count rows [M, 3], items
    resampled."""
    sums = resample(np.arange(len(rows)), rows, n_resamples, seed)           # [R, 3]
    full = rows.sum(0)
    return (*mean_and_variance(full[0], full[1], full[2]),
            *mean_and_variance(sums[:, 0], sums[:, 1], sums[:, 2]))


def released_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                        ) -> dict[str, tuple[float, np.ndarray]]:
    """``fairness/<task>/<attribute>/released/gus`` and ``.../released/<serp|prag>/snsr|snsv``
    as (full-sample value, [R] resamples), through the release's own count rows."""
    need = {"task", "attribute", "group", "item"}
    if not need <= set(frame.columns):
        return {}
    out: dict[str, tuple[float, np.ndarray]] = {}
    for (task, attribute), part in frame.groupby(["task", "attribute"]):
        part = part[part["group"] != NEUTRAL_GROUP]
        prefix = f"fairness/{task}/{attribute}/released"
        if "decision" in part.columns:
            by_item = {item: {g: [float(v == "yes") for v in vs] for g, vs in groups.items()}
                       for item, groups in _items(part, "decision").items()}
            rows = gus_rows(by_item)[1]
            if len(rows):
                mean, _, reps, _ = _replicates(rows, n_resamples, seed)
                out[f"{prefix}/gus"] = (float(mean), reps)
        if "ranked" in part.columns:
            lists = {item: {g: [list(one) for one in ls if one is not None]
                            for g, ls in groups.items()}
                     for item, groups in _items(part, "ranked").items()}
            for name in SIMILARITY:
                rows = sns_rows(lists, name)
                if not len(rows):
                    continue
                mean, var, reps, reps_var = _replicates(rows, n_resamples, seed)
                out[f"{prefix}/{name}/snsr"] = (float(1 - mean), 1 - reps)
                out[f"{prefix}/{name}/snsv"] = (float(var), reps_var)
    return out
