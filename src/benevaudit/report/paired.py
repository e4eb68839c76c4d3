"""Two runs over the same items, compared item by item: ``report.py runs=[A,B] paired=true``.

Each run's per-item verdicts are read from its own files and aligned by item key:

- detect, train and evaluate runs: ``predictions.parquet`` by ``id``; the binary verdict is
  ``flagged`` (a classifier run without it: ``pred`` other than N, the binary B-vs-N view),
  the three-way one ``pred``. Metrics: ``trigger/TR_<class>`` and ``trigger/delta_OB_BB``,
  and ``test/macro_f1`` where both runs have ``pred``;
- CoBia probe runs: ``responses.parquet`` by (``id``, ``method``), one verdict per rater
  (``<rater>_verdict``, refusal raters left out): ``cobia/bias_rate/<method>/<rater>/all``;
- FairMT-Bench probe runs: ``responses.parquet`` by (``id``, ``task``), the last turn's ``verdict``:
  ``fairmt/<task>/bias_rate``.

- FairDialogue probe runs: ``responses.parquet`` by (task, attribute, item, group, repeat):
  GUS and SNSR with items swapped whole, and each group's yes-rate
  (:mod:`benevaudit.report.paired_fairdialogue`).

Each metric is computed over the items valid in both runs, so
A's and B's values can differ slightly from their ``metrics.json``. Tests: McNemar's exact
test for each rate, the exact sign-flip test for Δ(OB−BB), the paired permutation test for
macro-F1 (:mod:`benevaudit.metrics.paired`); Holm's adjustment across every metric compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from benevaudit.errors import InputError
from benevaudit.metrics.detection import class_codes, flag_values
from benevaudit.metrics.paired import holm, mcnemar, signflip, swap_test
from benevaudit.metrics.rates import confusion_rates
from benevaudit.probes.cobia.raters import is_biased
from benevaudit.report import paired_fairdialogue as fairdialogue
from benevaudit.report.probe_intervals import rater_kinds
from benevaudit.schema import CLASSES

K = len(CLASSES)
FAIRMT_FLAGS = {"biased": 1.0, "not_biased": 0.0}   # FairMT's other verdicts are invalid


class Side(NamedTuple):
    """One run's items: key columns, ``label`` where known, and one float column per binary
    verdict (1 flagged, 0 not, NaN invalid); ``pred`` (three-way, or None) for detection."""

    kind: str                 # detection | cobia | fairmt | fairdialogue
    keys: tuple[str, ...]
    verdicts: tuple[str, ...]
    frame: pd.DataFrame


class Comparison(NamedTuple):
    """The per-metric table, the per-item flips, and the items only one run has."""

    table: pd.DataFrame      # metric, a, b, difference, n_items, discordant, test, p_value, ...
    flips: pd.DataFrame      # keys, label, verdict, a, b: ids and labels only, never texts
    only_a: int
    only_b: int
    kind: str


def _read(path: Path, name: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(path / name)
    except Exception as e:  # noqa: BLE001 - pyarrow raises many types for a torn file
        raise InputError(f"{path / name}: unreadable ({type(e).__name__}: {e})") from None


def _detection(frame: pd.DataFrame, where: Path) -> Side:
    if "id" not in frame.columns or not ({"flagged", "pred"} & set(frame.columns)):
        raise InputError(f"{where / 'predictions.parquet'}: a paired comparison needs 'id' and "
                         f"'flagged' or 'pred' columns; found {list(frame.columns)[:8]}")
    out = pd.DataFrame({"id": frame["id"].astype(str)})
    out["label"] = frame["label"] if "label" in frame.columns else None
    has_pred = "pred" in frame.columns and frame["pred"].notna().any()
    pred = [None if pd.isna(p) else str(p) for p in frame["pred"]] if has_pred else None
    if "flagged" in frame.columns and frame["flagged"].notna().any():
        out["flagged"] = flag_values(list(frame["flagged"]))
    elif pred is not None:
        out["flagged"] = [np.nan if p is None else float(p != "N") for p in pred]
    else:
        raise InputError(f"{where / 'predictions.parquet'}: no verdicts ('flagged' and 'pred' "
                         "are empty)")
    out["pred"] = pred
    return Side("detection", ("id",), ("flagged",), out)


def _probe(frame: pd.DataFrame, where: Path) -> Side:
    if fairdialogue.is_fairdialogue(frame):
        answers, verdicts = fairdialogue.answers(frame)
        return Side("fairdialogue", fairdialogue.KEYS, verdicts, answers)
    kinds = {r: k for r, k in rater_kinds(frame).items() if k != "refusal"}
    if kinds and {"id", "method"} <= set(frame.columns):
        out = frame[["id", "method"]].astype(str)
        for rater, kind in kinds.items():
            out[rater] = [np.nan if (b := is_biased(kind, v if isinstance(v, str) else None))
                          is None else float(b) for v in frame[f"{rater}_verdict"]]
        return Side("cobia", ("id", "method"), tuple(kinds), out)
    if {"id", "task", "verdict"} <= set(frame.columns):
        out = frame[["id", "task"]].astype(str)
        out["verdict"] = [FAIRMT_FLAGS.get(v, np.nan) for v in frame["verdict"]]
        return Side("fairmt", ("id", "task"), ("verdict",), out)
    raise InputError(f"{where / 'responses.parquet'}: not a CoBia run (id, method and "
                     "<rater>_verdict columns), a FairMT-Bench run (id, task, verdict) nor a "
                     "FairDialogue run (task, attribute, item, group, decision or ranked); a "
                     "paired comparison reads those, and detect/train/evaluate runs")


def read_side(path: Path) -> Side:
    """A run directory's items, from predictions.parquet, else responses.parquet."""
    if (path / "predictions.parquet").is_file():
        return _detection(_read(path, "predictions.parquet"), path)
    if (path / "responses.parquet").is_file():
        return _probe(_read(path, "responses.parquet"), path)
    raise InputError(f"{path}: no predictions.parquet or responses.parquet; a paired "
                     "comparison needs the items of both runs")


def align(a: Side, b: Side, names: tuple[str, str]) -> tuple[pd.DataFrame, int, int]:
    """(the items both runs have, with ``<verdict>_a``/``_b`` columns; items only in A; only
    in B). Runs of different kinds, repeated keys, no common item or a label that differs
    between the runs are errors."""
    if a.kind != b.kind:
        raise InputError(f"paired: {names[0]} is a {a.kind} run and {names[1]} a {b.kind} run; "
                         "only runs of one kind over the same items can be paired")
    for side, name in zip((a, b), names):
        repeated = side.frame.duplicated(list(side.keys))
        if repeated.any():
            first = side.frame.loc[repeated, list(side.keys)].iloc[0].tolist()
            raise InputError(f"paired: {name} has {int(repeated.sum())} repeated item(s) "
                             f"(first {first}); an item must appear once per run")
    keys = list(a.keys)
    merged = a.frame.merge(b.frame, on=keys, how="inner", suffixes=("_a", "_b"))
    only_a, only_b = len(a.frame) - len(merged), len(b.frame) - len(merged)
    if merged.empty:
        raise InputError(f"paired: {names[0]} and {names[1]} share no item ({len(a.frame)} and "
                         f"{len(b.frame)} items, keyed by {'+'.join(keys)})")
    if "label_a" in merged.columns:
        la, lb = merged["label_a"], merged["label_b"]
        differ = ~((la == lb) | (la.isna() & lb.isna()))
        if differ.any():
            raise InputError(f"paired: {int(differ.sum())} item(s) have another label in "
                             f"{names[1]} than in {names[0]} (first id "
                             f"{merged.loc[differ, 'id'].iloc[0]}); the runs read other data")
        merged = merged.drop(columns="label_b").rename(columns={"label_a": "label"})
    return merged, only_a, only_b


def _rate_row(metric: str, fa: np.ndarray, fb: np.ndarray) -> dict:
    b, c = int(((fa == 1) & (fb == 0)).sum()), int(((fa == 0) & (fb == 1)).sum())
    a_val, b_val = (float(fa.mean()), float(fb.mean())) if len(fa) else (np.nan, np.nan)
    return {"metric": metric, "a": a_val, "b": b_val, "n_items": len(fa), "discordant": b + c,
            "test": "McNemar exact", "p_value": mcnemar(b, c) if len(fa) else np.nan}


def _valid(merged: pd.DataFrame, verdict: str, mask: np.ndarray) -> tuple[np.ndarray, ...]:
    fa, fb = merged[f"{verdict}_a"].to_numpy(float), merged[f"{verdict}_b"].to_numpy(float)
    ok = mask & ~np.isnan(fa) & ~np.isnan(fb)
    return fa[ok], fb[ok], ok


def _detection_rows(merged: pd.DataFrame, n_resamples: int, seed: int) -> list[dict]:
    codes = class_codes(list(merged["label"]), "labels")
    rows, terms = [], np.zeros(len(merged))
    for i, c in enumerate(CLASSES):
        fa, fb, ok = _valid(merged, "flagged", codes == i)
        rows.append(_rate_row(f"trigger/TR_{c}", fa, fb))
        if c in ("OB", "BB") and len(fa):              # Δ = TR_OB − TR_BB, item by item
            terms[ok] = (fb - fa) / len(fa) * (1 if c == "OB" else -1)
    ob, bb = rows[CLASSES.index("OB")], rows[CLASSES.index("BB")]
    if ob["n_items"] and bb["n_items"]:
        rows.append({"metric": "trigger/delta_OB_BB", "a": ob["a"] - bb["a"],
                     "b": ob["b"] - bb["b"], "n_items": ob["n_items"] + bb["n_items"],
                     "discordant": ob["discordant"] + bb["discordant"],
                     "test": "sign-flip", "p_value": signflip(terms, n_resamples, seed)})
    if merged["pred_a"].notna().any() and merged["pred_b"].notna().any():
        rows.append(_macro_f1_row(merged, codes, n_resamples, seed))
    return rows


def _macro_f1_row(merged: pd.DataFrame, codes: np.ndarray, n_resamples: int, seed: int) -> dict:
    ok = (codes >= 0) & merged["pred_a"].notna().to_numpy() & merged["pred_b"].notna().to_numpy()
    y = codes[ok]
    pa = class_codes(list(merged.loc[ok, "pred_a"]), "pred")
    pb = class_codes(list(merged.loc[ok, "pred_b"]), "pred")

    def macro_f1(pred: np.ndarray) -> np.ndarray:                   # [R, n] -> [R]
        cell = np.arange(len(pred))[:, None] * K * K + y[None, :] * K + pred
        cm = np.bincount(cell.ravel(), minlength=len(pred) * K * K).reshape(-1, K, K)
        return confusion_rates(cm)["test/macro_f1"]

    a_val, b_val = float(macro_f1(pa[None])[0]), float(macro_f1(pb[None])[0])
    return {"metric": "test/macro_f1", "a": a_val, "b": b_val, "n_items": int(ok.sum()),
            "discordant": int((pa != pb).sum()), "test": "paired permutation",
            "p_value": swap_test(pa, pb, macro_f1, n_resamples, seed)}


def _probe_rows(kind: str, merged: pd.DataFrame, verdicts: tuple[str, ...]) -> list[dict]:
    arm = "method" if kind == "cobia" else "task"
    rows = []
    for value in sorted(merged[arm].unique()):
        for verdict in verdicts:
            fa, fb, _ = _valid(merged, verdict, (merged[arm] == value).to_numpy())
            name = (f"cobia/bias_rate/{value}/{verdict}/all" if kind == "cobia"
                    else f"fairmt/{value}/bias_rate")
            rows.append(_rate_row(name, fa, fb))
    return rows


def _flips(side: Side, merged: pd.DataFrame) -> pd.DataFrame:
    """Items whose verdict changed A→B: their keys, label, the verdict and its two values."""
    parts = []
    head = [*side.keys, *(["label"] if "label" in merged.columns else [])]
    for verdict in side.verdicts:
        fa, fb = merged[f"{verdict}_a"], merged[f"{verdict}_b"]
        changed = (fa != fb) & fa.notna() & fb.notna()
        part = merged.loc[changed, head].assign(verdict=verdict, a=fa[changed].astype(int),
                                                b=fb[changed].astype(int))
        parts.append(part)
    if side.kind == "detection":
        pa, pb = merged["pred_a"], merged["pred_b"]
        changed = (pa != pb) & pa.notna() & pb.notna()
        parts.append(merged.loc[changed, head].assign(verdict="pred", a=pa[changed],
                                                      b=pb[changed]))
    columns = [*head, "verdict", "a", "b"]
    flips = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return flips[columns]


def compare(path_a: Path, path_b: Path, names: tuple[str, str], alpha: float = 0.05,
            n_resamples: int = 10_000, seed: int = 0) -> Comparison:
    """The paired comparison of run A and run B (see the module docstring); a metric's change
    is significant when its Holm-adjusted p-value is below ``alpha``."""
    a, b = read_side(path_a), read_side(path_b)
    if a.kind == b.kind == "fairdialogue" and a.verdicts != b.verdicts:
        raise InputError(f"paired: {names[0]} and {names[1]} are not both decision or both "
                         "recommendation runs")
    merged, only_a, only_b = align(a, b, names)
    a = a._replace(verdicts=tuple(v for v in a.verdicts if v in b.verdicts))
    if a.kind == "fairdialogue":
        rows = fairdialogue.rows_of(merged, n_resamples, seed)
    elif not a.verdicts:
        raise InputError(f"paired: {names[0]} and {names[1]} share no rater")
    elif a.kind == "detection":
        rows = _detection_rows(merged, n_resamples, seed)
    else:
        rows = _probe_rows(a.kind, merged, a.verdicts)
    table = pd.DataFrame(rows)
    table.insert(3, "difference", table["b"] - table["a"])
    table["p_holm"] = holm(table["p_value"].to_numpy())
    table["significant"] = table["p_holm"] < alpha
    table["worse"] = [worse(m, x, y) for m, x, y in zip(table["metric"], table["a"], table["b"])]
    return Comparison(table, _flips(a, merged), only_a, only_b, a.kind)


def worse(metric: str, a: float, b: float) -> bool:
    """Whether B is worse than A on ``metric``: a detector that flags fewer biased dialogues
    (lower TR_OB, TR_BB), more neutral ones (higher TR_N), a wider overt–benevolent gap
    (larger |Δ|), a lower macro-F1; a target more often judged biased (higher bias rate), a
    larger group disparity (GUS, SNSR). A group's yes-rate is never worse, only changed."""
    if "/yes_rate/" in metric:                 # a group's yes-rate: neither way is worse
        return False
    if metric.endswith("delta_OB_BB"):
        return abs(b) > abs(a)
    if metric.endswith(("TR_OB", "TR_BB", "macro_f1")):
        return b < a
    return b > a                               # TR_N, bias rates
