"""Bootstrap resamples for the probe studies, over items of ``responses.parquet``.

A probe item is rendered several ways (CoBia: one item under each method; FairDialogue: one
utterance under every group of an attribute), so the item is the resampling unit: its
renderings are drawn together, as matched triplets are for the classifier.
Each function returns ``{metric name: (full-sample value, [R] resamples)}`` under the names
the probe writes to ``metrics.json``, through the same count rows and formulas the probe's
scoring uses (:mod:`benevaudit.metrics.rates`, :func:`benevaudit.probes.cobia.scoring.item_counts`).
:func:`matching` keeps a name only where the rows reproduce the run's own value: a run
directory whose ``responses.parquet`` was edited or left from another run gets no interval.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd

from benevaudit.metrics.fairness import prag_denominator, prag_pairs
from benevaudit.metrics.rates import gus_of_sums, persistence_of_sums, share
from benevaudit.metrics.resample import resample
from benevaudit.probes.cobia import scoring
from benevaudit.probes.cobia.raters import LABELS

NEUTRAL_GROUP = "neutral"


def rater_kinds(frame: pd.DataFrame) -> dict[str, str]:
    """Each ``<rater>_verdict`` column's rater kind: the kind whose verdict labels it holds
    most of (the kinds' label sets are disjoint); a column with none of them is left out."""
    out = {}
    for column in [c for c in frame.columns if c.endswith("_verdict")]:
        seen = pd.Series(frame[column]).value_counts()
        fits = {kind: int(seen.reindex(list(labels)).fillna(0).sum())
                for kind, labels in LABELS.items()}
        kind = max(fits, key=fits.__getitem__)
        if fits[kind]:
            out[column.removesuffix("_verdict")] = kind
    return out


def cobia_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                     ) -> dict[str, tuple[float, np.ndarray]]:
    """``cobia/bias_rate/<method>/<rater>/<category|all>`` and ``cobia/ucc/<rater>/<category|all>``
    as (full-sample value, [R] resamples): the counts :func:`scoring.item_counts` gives the
    run's rates, the items of each cell resampled by ``id``. A verdict outside its rater's
    labels counts as invalid."""
    if not {"id", "method", "category"} <= set(frame.columns):
        return {}
    kinds = rater_kinds(frame)
    rows = frame[["id", "method", "category"]].to_dict("records")
    for rater, kind in kinds.items():
        for row, v in zip(rows, frame[f"{rater}_verdict"].tolist(), strict=True):
            row[f"{rater}_verdict"] = v if v in LABELS[kind] else None
    cells = scoring.item_counts(rows, kinds)
    out: dict[str, tuple[float, np.ndarray]] = {}
    for c, name in enumerate(cells.names):
        units = np.flatnonzero(cells.scope[:, c])
        if name.startswith("cobia/ucc/"):            # items in id order, as grouped by id
            units = units[np.argsort([str(cells.items[u]) for u in units], kind="stable")]
        counts = cells.counts[units, c]                                   # [G, 2]
        sums = resample(np.arange(len(units)), counts, n_resamples, seed)  # [R, 2]
        out[name] = (float(share(counts[:, 0].sum(), counts[:, 1].sum())),
                     share(sums[:, 0], sums[:, 1]))
    return out


def gus_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                   ) -> dict[str, tuple[float, np.ndarray]]:
    """``fairness/<task>/<attribute>/gus``: items answered validly under every group, resampled."""
    if not {"task", "attribute", "group", "item", "decision"} <= set(frame.columns):
        return {}
    out = {}
    for (task, attribute), part in frame.groupby(["task", "attribute"]):
        part = part[part["group"] != NEUTRAL_GROUP]
        wide = (part.assign(d=part["decision"].map({"yes": 1.0, "no": 0.0}))
                .pivot_table(index="item", columns="group", values="d", aggfunc="first"))
        wide = wide.dropna()
        if wide.shape[1] < 2 or wide.empty:
            continue
        d = wide.to_numpy()                                              # [N, |A|]
        diff = np.abs(d[:, :, None] - d[:, None, :]).sum(2)                # [N, |A|]
        sums = resample(np.arange(len(d)), np.concatenate([diff, np.ones((len(d), 1))], 1),
                        n_resamples, seed)                                 # [R, |A| + 1]
        full = gus_of_sums(diff.sum(0), len(d), d.shape[1])[0]
        out[f"fairness/{task}/{attribute}/gus"] = (
            float(full), gus_of_sums(sums[:, :-1], sums[:, -1], d.shape[1])[0])
    return out


def prag_replicates(frame: pd.DataFrame, k: int, normalise: str, n_resamples: int, seed: int
                    ) -> dict[str, tuple[float, np.ndarray]]:
    """``fairness/<task>/<attribute>/snsr`` and ``snsv`` over ordered group pairs, items resampled."""
    if not {"task", "attribute", "group", "item", "ranked"} <= set(frame.columns):
        return {}
    out = {}
    for (task, attribute), part in frame.groupby(["task", "attribute"]):
        part = part[part["group"] != NEUTRAL_GROUP]
        lists = {(r.item, r.group): list(r.ranked) for r in part.itertuples()
                 if r.ranked is not None}
        groups = sorted(part["group"].unique())
        items = sorted({i for i, _ in lists if all((i, g) in lists for g in groups)})
        if len(groups) < 2 or not items:
            continue
        pairs = list(permutations(groups, 2))
        contrib = np.array([[prag_pairs(lists[(i, a)], lists[(i, b)], k) for a, b in pairs]
                            for i in items], dtype=float)                # [M, P]
        sums = resample(np.arange(len(items)), np.concatenate(
            [contrib, np.ones((len(items), 1))], 1), n_resamples, seed)
        values = sums[:, :-1] / (prag_denominator(k, normalise) * sums[:, -1:])   # [R, P]
        full = contrib.sum(0) / (prag_denominator(k, normalise) * len(items))
        out[f"fairness/{task}/{attribute}/snsr"] = (float(full.max() - full.min()),
                                                    values.max(1) - values.min(1))
        out[f"fairness/{task}/{attribute}/snsv"] = (float(full.var()), values.var(1))
    return out


def feedback_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                        ) -> dict[str, tuple[float, np.ndarray]]:
    """``fairness/feedback/<attribute>/<group>/rst`` and ``anr``: the items in the protocol
    (answered no under every group) resampled, each group's trace of an item drawn with it."""
    if not {"task", "attribute", "group", "item", "in_protocol", "revised_at"} <= set(frame.columns):
        return {}
    out = {}
    part = frame[frame["in_protocol"].astype(bool)]
    for (attribute, group), rows in part.groupby(["attribute", "group"]):
        rounds = pd.to_numeric(rows["revised_at"], errors="coerce").to_numpy(dtype=float)
        revised = np.isfinite(rounds).astype(float)
        counts = np.stack([revised, np.ones_like(revised), np.nan_to_num(rounds)], axis=1)
        units = pd.factorize(rows["task"].astype(str) + "\x1f" + rows["item"].astype(str))[0]
        sums = resample(units, counts, n_resamples, seed)                 # [R, 3]
        base = f"fairness/feedback/{attribute}/{group}"
        full = counts.sum(0)
        rst, anr = persistence_of_sums(full[0], full[1], full[2])
        reps_rst, reps_anr = persistence_of_sums(sums[:, 0], sums[:, 1], sums[:, 2])
        out[f"{base}/rst"], out[f"{base}/anr"] = (float(rst), reps_rst), (float(anr), reps_anr)
    return out


def matching(full_and_reps: dict[str, tuple[float, np.ndarray]], metrics: dict[str, float],
             tolerance: float = 1e-6) -> dict[str, np.ndarray]:
    """Only the resamples whose full-sample value reproduces the run's own metric (the rows on
    disk are the rows the run scored)."""
    return {name: reps for name, (full, reps) in full_and_reps.items()
            if name in metrics and np.isfinite(full) and abs(full - metrics[name]) <= tolerance}
