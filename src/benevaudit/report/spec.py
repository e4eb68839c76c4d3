"""report.py's blocks, typed as in :mod:`benevaudit.specs`: ``bootstrap`` (95% intervals of
every study-table cell) and ``wandb`` (the W&B Report)."""

from __future__ import annotations

from typing import Optional

from benevaudit.specs import NonNegativeInt, Spec


class IntervalsSpec(Spec):
    """report.py's ``bootstrap``: 95% intervals of every study-table cell (0 resamples: none)."""

    n_resamples: NonNegativeInt
    seed: NonNegativeInt


class WandbReportSpec(Spec):
    """report.py's ``wandb``: whether to build a W&B Report too, and where."""

    report: bool
    project: str
    entity: Optional[str]
    mode: str
