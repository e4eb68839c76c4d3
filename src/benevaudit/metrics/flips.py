"""Demographic-context flips: how a judge's verdict changes when it is told who is talking.

The same judge scores the same dialogues twice, with and without the user and agent
demographics in its prompt. A *flip* is a dialogue whose prediction moves between N and BB:
N→BB (demographics made the judge call it benevolent bias) or BB→N. Each flip is

- *wrong* when it moves away from the true label (the verdict without demographics was right),
- *corrective* when it moves onto the true label,
- *other* when neither verdict is right (a true OB dialogue), kept so the counts add up.

Counts are split by the user's ability group, the axis on which the study saw the judges move.
"""

from __future__ import annotations

import pandas as pd

from benevaudit.errors import InputError
from benevaudit.metrics.detection import is_missing
from benevaudit.schema import ABILITIES

DIRECTIONS: dict[str, tuple[str, str]] = {"N_to_BB": ("N", "BB"), "BB_to_N": ("BB", "N")}
KINDS: tuple[str, ...] = ("wrong", "corrective", "other")
ALL = "all"
REQUIRED = ("id", "label", "pred", "user_ability")


def _check(frame: pd.DataFrame, name: str) -> None:
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"flips: the {name} predictions lack column(s) {missing}; "
                         f"expected {list(REQUIRED)} (predictions.parquet of a judge run)")
    if not frame["id"].is_unique:
        raise InputError(f"flips: the {name} predictions repeat ids, e.g. "
                         f"{frame['id'][frame['id'].duplicated()].iloc[0]!r}")


def _kind(label: str, before: str, after: str) -> str:
    if before == label:
        return "wrong"
    if after == label:
        return "corrective"
    return "other"


def pair_runs(with_df: pd.DataFrame, without_df: pd.DataFrame) -> pd.DataFrame:
    """One row per dialogue scored in both runs: id, label, user_ability, pred_with, pred_without."""
    _check(with_df, "with-demographics")
    _check(without_df, "without-demographics")
    both = with_df[list(REQUIRED)].merge(without_df[["id", "label", "pred"]], on="id",
                                         suffixes=("_with", "_without"))
    if both.empty:
        raise InputError("flips: the two runs share no dialogue id; point flips.with and "
                         "flips.without at runs of the same judge on the same evaluation set")
    differ = both["label_with"].astype(str) != both["label_without"].astype(str)
    if differ.any():
        raise InputError(f"flips: dialogue {both['id'][differ].iloc[0]!r} has different labels "
                         f"in the two runs; they must score the same corpus")
    return both.rename(columns={"label_with": "label"}).drop(columns="label_without")


def _ability_order(values: pd.Series) -> list[str]:
    present = set(values.astype(str))
    return [a for a in ABILITIES if a in present] + sorted(present - set(ABILITIES))


def flip_table(with_df: pd.DataFrame, without_df: pd.DataFrame) -> pd.DataFrame:
    """Long table: user_ability (each group, then ``all``), direction, kind, count, n.

    ``n`` is the number of dialogues of that group with a valid verdict in both runs; every
    (group, direction, kind) row is present, zeros included, so metric names are stable.
    Dialogues with an invalid verdict in either run cannot flip and are left out.
    """
    both = pair_runs(with_df, without_df)
    valid = ~(both["pred_with"].map(is_missing) | both["pred_without"].map(is_missing))
    both = both[valid]
    groups = _ability_order(both["user_ability"])
    counts = {(g, d, k): 0 for g in [*groups, ALL] for d in DIRECTIONS for k in KINDS}
    for label, ability, after, before in zip(both["label"], both["user_ability"].astype(str),
                                             both["pred_with"], both["pred_without"]):
        for direction, (src, dst) in DIRECTIONS.items():
            if before == src and after == dst:
                kind = _kind(label, before, after)
                counts[(ability, direction, kind)] += 1
                counts[(ALL, direction, kind)] += 1
    sizes = both["user_ability"].astype(str).value_counts().to_dict()
    sizes[ALL] = len(both)
    rows = [{"user_ability": g, "direction": d, "kind": k, "count": c, "n": int(sizes.get(g, 0))}
            for (g, d, k), c in counts.items()]
    table = pd.DataFrame(rows, columns=["user_ability", "direction", "kind", "count", "n"])
    table.attrs["n_invalid"] = int((~valid).sum())
    table.attrs["n_unpaired"] = int(len(with_df) + len(without_df) - 2 * len(valid))
    return table


def slug(value: str) -> str:
    """A metric-name-safe form of a group name: 'with sensory disability' -> 'with_sensory_disability'."""
    return "_".join(str(value).split())


def flip_metrics(table: pd.DataFrame) -> dict[str, float]:
    """``flips/<direction>/<kind>`` over all groups, ``flips/<ability>/<direction>/<kind>`` per
    group, and the dialogue counts ``flips/n`` and ``flips/<ability>/n``."""
    out: dict[str, float] = {}
    for row in table.itertuples(index=False):
        head = "flips" if row.user_ability == ALL else f"flips/{slug(row.user_ability)}"
        out[f"{head}/{row.direction}/{row.kind}"] = float(row.count)
        out[f"{head}/n"] = float(row.n)
    out["flips/n_invalid"] = float(table.attrs.get("n_invalid", 0))
    out["flips/n_unpaired"] = float(table.attrs.get("n_unpaired", 0))
    return out
