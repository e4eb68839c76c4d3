"""report.py's blocks, typed as in :mod:`benevaudit.specs`: ``bootstrap`` (95% intervals of
every study-table cell), ``wandb`` (the W&B Report), ``significance`` and ``gate`` (the paired
comparison of two runs, and the CI gate on it)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from benevaudit.specs import NonNegativeInt, PositiveInt, Spec


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



class SignificanceSpec(Spec):
    """report.py's ``significance``: the paired comparison's level and permutation draws."""

    alpha: Annotated[float, Field(gt=0, lt=1)]
    n_resamples: PositiveInt              # the macro-F1 permutation test's random swaps
    seed: NonNegativeInt


class GateSpec(Spec):
    """report.py's ``gate``: exit non-zero on a significant paired change. ``gate=true``
    replaces the block: ``metrics`` and ``direction`` are then absent (every metric, any
    direction)."""

    enabled: bool
    metrics: Optional[list[str]] = None
    direction: Optional[Literal["any", "worse"]] = None

    @property
    def wanted(self) -> bool:
        """On when enabled, or when ``gate.metrics`` or ``gate.direction=worse`` is set alone."""
        return self.enabled or self.metrics is not None or self.direction == "worse"
