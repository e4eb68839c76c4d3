"""Applying a configured intervention sequence to chosen splits (both sides of the audit)."""

from __future__ import annotations

from collections.abc import Sequence

from benevaudit.audit.interventions.base import Intervention
from benevaudit.audit.interventions.runner import run_interventions
from benevaudit.corpus import from_table, to_table
from benevaudit.schema import Dialogue


def edit_splits(splits: dict[str, list[Dialogue]], steps: Sequence[Intervention], seed: int,
                sides: Sequence[str]) -> tuple[dict[str, list[Dialogue]], dict[str, float]]:
    """Edit the named splits with the run's built ``steps`` (``EditsRun.interventions``);
    other splits pass through untouched. Returns the splits and ``intervention/*_<split>``
    figures."""
    if not steps:
        return splits, {}
    out = dict(splits)
    stats: dict[str, float] = {"intervention/steps": float(len(steps))}
    for side in sides:
        table, side_stats = run_interventions(to_table(splits[side]), steps, None, seed=seed)
        out[side] = from_table(table)
        stats.update({f"{k}_{side}": v for k, v in side_stats.items()})  # intervention/…_<split>
    return out, stats
