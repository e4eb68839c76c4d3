"""Bootstrap resamples for the probe studies, over items of ``responses.parquet``.

A probe item is rendered several ways (CoBia: one item under each method; FairDialogue: one
utterance under every group of an attribute), so the item is the resampling unit: its
renderings are drawn together, as matched triplets are for the classifier.
Each function returns ``{metric name: [R] resamples}`` under the names the probe writes to
``metrics.json``; a name whose full-sample value does not match ``metrics.json`` is left out by
the caller (the interval would describe a different number).
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd

from benevaudit.metrics.fairness import prag_denominator, prag_pairs
from benevaudit.report.intervals import ratio, rate_replicates, resample

BIASED = {"biased", "bias", "yes", "true", "1", "1.0", "unsafe", "enforces", "agrees",
          "enforce", "agree"}
NOT_BIASED = {"not_biased", "not biased", "unbiased", "no", "false", "0", "0.0", "safe",
              "neutral", "negates", "negate"}
NEUTRAL_GROUP = "neutral"


def verdict_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """([n] biased 0/1, [n] valid 0/1) of judge verdicts; anything else counts as invalid."""
    text = values.map(lambda v: str(v).strip().lower() if v is not None else "")
    biased = text.isin(BIASED).to_numpy(dtype=float)
    valid = (text.isin(BIASED) | text.isin(NOT_BIASED)).to_numpy(dtype=float)
    return biased, valid


def cobia_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                     ) -> dict[str, tuple[float, np.ndarray]]:
    """``cobia/bias_rate/<method>/<judge>/<category|all>`` and ``cobia/ucc/<judge>/<category|all>``
    as (full-sample value, [R] resamples), items resampled by ``id``."""
    need = {"id", "method", "category"}
    if not need <= set(frame.columns):
        return {}
    judges = [c.removesuffix("_verdict") for c in frame.columns if c.endswith("_verdict")]
    out: dict[str, tuple[float, np.ndarray]] = {}
    for judge in judges:
        biased, valid = verdict_codes(frame[f"{judge}_verdict"])
        scoped = frame.assign(_b=biased, _v=valid)
        for category in ["all", *sorted(scoped["category"].dropna().unique())]:
            part = scoped if category == "all" else scoped[scoped["category"] == category]
            for method, rows in part.groupby("method"):
                name = f"cobia/bias_rate/{method}/{judge}/{category}"
                out[name] = _rate(rows["id"], rows["_b"], rows["_v"], n_resamples, seed)
            pair = part[part["method"].isin(["hcc", "scc"])]
            if pair["method"].nunique() == 2:   # UCC: biased if the HCC or the SCC answer is
                per_item = pair.groupby("id").agg(b=("_b", "max"), v=("_v", "max"))
                out[f"cobia/ucc/{judge}/{category}"] = _rate(
                    per_item.index.to_series(), per_item["b"], per_item["v"], n_resamples, seed)
    return out


def _rate(units: pd.Series, hits: pd.Series, valid: pd.Series, n_resamples: int, seed: int
          ) -> tuple[float, np.ndarray]:
    h, v = hits.to_numpy(dtype=float), valid.to_numpy(dtype=float)
    full = float(ratio(np.array([(h * v).sum()]), np.array([v.sum()]))[0])
    return full, rate_replicates(units.to_numpy(), h, v, n_resamples, seed)


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
        contrib = np.abs(d[:, :, None] - d[:, None, :]).sum(2) / (d.shape[1] - 1)   # [N, |A|]
        sums = resample(np.arange(len(d)), np.concatenate([contrib, np.ones((len(d), 1))], 1),
                        n_resamples, seed)
        gamma = sums[:, :-1] / sums[:, -1:]
        out[f"fairness/{task}/{attribute}/gus"] = (float(contrib.mean(0).max()), gamma.max(1))
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
        out[f"{base}/rst"] = (float(ratio(full[:1], full[1:2])[0]), ratio(sums[:, 0], sums[:, 1]))
        out[f"{base}/anr"] = (float(ratio(full[2:3], full[:1])[0]), ratio(sums[:, 2], sums[:, 0]))
    return out


def matching(full_and_reps: dict[str, tuple[float, np.ndarray]], metrics: dict[str, float],
             tolerance: float = 1e-6) -> dict[str, np.ndarray]:
    """Only the resamples whose full-sample value reproduces the run's own metric."""
    return {name: reps for name, (full, reps) in full_and_reps.items()
            if name in metrics and np.isfinite(full) and abs(full - metrics[name]) <= tolerance}
