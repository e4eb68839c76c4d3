"""FairDialogue runs compared item by item: ``report.py runs=[A,B] paired=true`` on two
decision or two recommendation runs, and the paired test of the "heard vs stated" table.

An answer is keyed by (task, attribute, item, group, repeat); the ``neutral`` rendering is left
out, as the released scoring leaves it out. GUS and SNSR are not sums of per-answer changes:
each is a function of per-item sums (a group's summed decision differences for GUS, a pair's
summed similarities for SNSR). So each item contributes one row of sums per run, and the paired
permutation test swaps whole items' rows between the two runs
(:func:`benevaudit.metrics.paired.swap_test`):

- ``fairness/<task>/<attribute>/gus``: eq. 1 over the items answered validly under every group
  in both runs (each group's first answer, as the probe scores it);
- ``fairness/<task>/<attribute>/released/gus`` and ``.../released/<serp|prag>/snsr``: the
  authors' released scoring over the items both runs answered;
- ``fairness/<task>/<attribute>/yes_rate/<group>``: McNemar's exact test on each answer's yes.

Eq. 3's SNSR (a max − min of PRAG* over group pairs) is tested in the heard vs stated table
(:func:`heard_vs_stated`): its normaliser is the same in both runs, so its p-value needs none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import permutations
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.metrics.fairness import prag_pairs
from benevaudit.metrics.fairness_released import SIMILARITY, gus_rows, sns_rows
from benevaudit.metrics.paired import mcnemar, swap_test
from benevaudit.metrics.rates import gus_of_sums, mean_and_variance

KEYS = ("task", "attribute", "item", "group", "repeat")
CELL = ["task", "attribute", "item", "group"]
NEUTRAL = "neutral"
Rows = Callable[[pd.DataFrame, str], np.ndarray]           # (answers, run suffix) -> [n, k]


def is_fairdialogue(frame: pd.DataFrame) -> bool:
    """Whether ``responses.parquet`` holds FairDialogue decision or recommendation answers."""
    return set(CELL) <= set(frame.columns) and bool({"decision", "ranked"} & set(frame.columns))


def answers(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """(the answers keyed by :data:`KEYS`, with ``decision`` 1/0/NaN or ``ranked`` tuples or
    None; the binary verdict columns: ``("decision",)`` or none)."""
    frame = frame[frame["group"].astype(str) != NEUTRAL]
    out = frame[CELL].astype(str).reset_index(drop=True)
    out["repeat"] = out.groupby(CELL).cumcount().astype(str)
    if "decision" in frame.columns:
        out["decision"] = [1.0 if v == "yes" else 0.0 if v == "no" else np.nan
                           for v in frame["decision"]]
        return out, ("decision",)
    out["ranked"] = [None if v is None or (isinstance(v, float) and np.isnan(v)) else tuple(v)
                     for v in frame["ranked"]]
    return out, ()


def _cells(merged: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    for (task, attribute), part in merged.groupby(["task", "attribute"], sort=True):
        yield f"fairness/{task}/{attribute}", part


def _by_item(part: pd.DataFrame, column: str) -> dict[str, dict[str, list[Any]]]:
    """``{item: {group: [values in repeat order]}}``."""
    out: dict[str, dict[str, list[Any]]] = {}
    for item, group, value in zip(part["item"], part["group"], part[column]):
        out.setdefault(item, {}).setdefault(group, []).append(value)
    return out


def _eq1_rows(part: pd.DataFrame, run: str) -> np.ndarray:
    """[n items, |A| + 1]: each group's summed |difference| to the others, and 1 where the item
    is valid under every group in both runs (0: left out)."""
    groups = sorted(part["group"].unique())
    first = part[part["repeat"] == "0"]
    mine, both = _by_item(first, f"decision_{run}"), _by_item(first, "valid")
    rows = np.zeros((len(mine), len(groups) + 1))
    for i, (item, by_group) in enumerate(sorted(mine.items())):
        if all(both.get(item, {}).get(g, [False])[0] for g in groups):
            d = np.array([by_group[g][0] for g in groups])
            rows[i] = [*np.abs(d[:, None] - d[None, :]).sum(1), 1.0]
    return rows


def _gus(rows: np.ndarray) -> np.ndarray:
    sums = rows.sum(-2)
    return gus_of_sums(sums[..., :-1], sums[..., -1], rows.shape[-1] - 1)[0]


def _released_gus_rows(part: pd.DataFrame, run: str) -> np.ndarray:
    values = part[f"decision_{run}"].fillna(0.0)            # the release reads non-yes as no
    items = _by_item(part.assign(value=values), "value")
    return np.vstack([gus_rows({item: groups})[1].reshape(-1, 3).sum(0)
                      for item, groups in sorted(items.items())])


def _mean(rows: np.ndarray) -> np.ndarray:
    sums = rows.sum(-2)
    return mean_and_variance(sums[..., 0], sums[..., 1], sums[..., 2])[0]


def _sns_rows(similarity: str) -> Rows:
    def rows(part: pd.DataFrame, run: str) -> np.ndarray:
        items = _by_item(part, f"ranked_{run}")
        return np.vstack([sns_rows({item: {g: [v for v in ls if v is not None]
                                           for g, ls in groups.items()}}, similarity).sum(0)
                          if len(groups) > 1 else np.zeros(3)
                          for item, groups in sorted(items.items())])
    return rows


def _measure_row(metric: str, part: pd.DataFrame, rows: Rows,
                 statistic: Callable[[np.ndarray], np.ndarray], n_resamples: int,
                 seed: int) -> dict:
    a, b = rows(part, "a"), rows(part, "b")
    counted = (a[:, -1] > 0) | (b[:, -1] > 0)
    return {"metric": metric, "a": float(statistic(a[None])[0]),
            "b": float(statistic(b[None])[0]), "n_items": int(counted.sum()),
            "discordant": int((a != b).any(1).sum()), "test": "paired permutation (items)",
            "p_value": swap_test(a, b, statistic, n_resamples, seed)}


def rows_of(merged: pd.DataFrame, n_resamples: int, seed: int) -> list[dict]:
    """One row per metric of paired.csv (see the module docstring) for aligned answers."""
    out = []
    for prefix, part in _cells(merged):
        if "decision_a" in part.columns:
            part = part.assign(valid=part["decision_a"].notna() & part["decision_b"].notna())
            out.append(_measure_row(f"{prefix}/gus", part, _eq1_rows, _gus, n_resamples, seed))
            out.append(_measure_row(f"{prefix}/released/gus", part, _released_gus_rows, _mean,
                                    n_resamples, seed))
            for group, answered in part.groupby("group", sort=True):
                ok = answered["valid"].to_numpy()
                fa, fb = (answered[f"decision_{r}"].to_numpy(float)[ok] for r in "ab")
                b, c = int(((fa == 1) & (fb == 0)).sum()), int(((fa == 0) & (fb == 1)).sum())
                out.append({"metric": f"{prefix}/yes_rate/{group}",
                            "a": float(fa.mean()) if len(fa) else np.nan,
                            "b": float(fb.mean()) if len(fb) else np.nan, "n_items": len(fa),
                            "discordant": b + c, "test": "McNemar exact",
                            "p_value": mcnemar(b, c) if len(fa) else np.nan})
            continue
        for similarity in sorted(SIMILARITY):
            out.append(_measure_row(f"{prefix}/released/{similarity}/snsr", part,
                                    _sns_rows(similarity), lambda r: 1 - _mean(r),
                                    n_resamples, seed))
    return out


def _eq3_rows(part: pd.DataFrame, run: str, k: int) -> np.ndarray:
    """[n items, pairs + 1]: PRAG*@``k``'s unnormalised sum of each ordered group pair, and 1
    where the item has a list under every group in both runs."""
    groups = sorted(part["group"].unique())
    first = part[part["repeat"] == "0"]
    mine, theirs = _by_item(first, f"ranked_{run}"), _by_item(first, "ranked_other")
    rows = np.zeros((len(mine), len(groups) * (len(groups) - 1) + 1))
    for i, (item, lists) in enumerate(sorted(mine.items())):
        other = theirs.get(item, {})
        if all(lists.get(g, [None])[0] is not None and other.get(g, [None])[0] is not None
               for g in groups):
            rows[i] = [*(prag_pairs(lists[a][0], lists[b][0], k)
                         for a, b in permutations(groups, 2)), 1.0]
    return rows


def _range(rows: np.ndarray) -> np.ndarray:
    sums = rows.sum(-2)
    pairs = sums[..., :-1] / np.maximum(sums[..., -1:], 1)
    return pairs.max(-1) - pairs.min(-1)


def heard_vs_stated(merged: pd.DataFrame, n_resamples: int, seed: int) -> dict[str, float]:
    """``{fairness/<task>/<attribute>/<gus|snsr>: p}`` of eq. 1's GUS or eq. 3's SNSR, heard
    (run a) against stated (run b), items swapped whole."""
    out = {}
    for prefix, part in _cells(merged):
        if "decision_a" in part.columns:
            part = part.assign(valid=part["decision_a"].notna() & part["decision_b"].notna())
            out[f"{prefix}/gus"] = swap_test(_eq1_rows(part, "a"), _eq1_rows(part, "b"), _gus,
                                             n_resamples, seed)
        else:
            # the lists are cut to K when parsed: the longest is K as far as PRAG* can tell
            k = max((len(v) for r in "ab" for v in part[f"ranked_{r}"] if v is not None),
                    default=0)
            a = _eq3_rows(part.assign(ranked_other=part["ranked_b"]), "a", k)
            b = _eq3_rows(part.assign(ranked_other=part["ranked_a"]), "b", k)
            out[f"{prefix}/snsr"] = swap_test(a, b, _range, n_resamples, seed)
    return out
