"""What a report is made of: sections of tables and figures, and table cells that carry their
spread (mean ± std over seeds, n) and a 95% interval. Renderers (Markdown, HTML, the W&B Report
specification) read these plain objects, so every output shows the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benevaudit.report.intervals import percentile_interval


@dataclass(frozen=True)
class Cell:
    """A table value: mean over n runs (seeds of one configuration), their std, and the 95%
    interval (bootstrap over the runs' dialogues, or the run's own interval)."""

    mean: float
    std: float = float("nan")
    n: int = 1
    low: float = float("nan")
    high: float = float("nan")

    def text(self, digits: int = 3) -> str:
        if not math.isfinite(self.mean):
            return "n/a"
        out = f"{self.mean:.{digits}f}"
        if self.n > 1:
            out += f" ± {self.std:.{digits}f} (n={self.n})"
        if math.isfinite(self.low) and math.isfinite(self.high):
            out += f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return out


def text_of(value: object) -> str:
    return value.text() if isinstance(value, Cell) else str(value)


@dataclass
class Table:
    """A titled table; cells are strings (labels) or :class:`Cell` values."""

    title: str
    headers: list[str]
    rows: Sequence[Sequence[object]]
    note: str = ""

    def text_rows(self) -> list[list[str]]:
        return [[text_of(v) for v in row] for row in self.rows]


@dataclass(frozen=True)
class Figure:
    """A PNG a run wrote, with the caption that names its run or condition."""

    path: Path
    caption: str


@dataclass
class SectionOutput:
    """One study's part of the report."""

    key: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


def aggregate(values: Sequence[float], replicates: Sequence[np.ndarray | None],
              own_interval: tuple[float, float] | None = None) -> Cell:
    """One cell from the runs of one configuration.

    ``replicates`` holds each run's bootstrap resamples of the metric (None where the run has
    no per-dialogue rows); averaging the r-th resample across runs gives the interval of the
    mean. A single run without rows falls back to its own interval (e.g. ``*_ci_low/high``)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return Cell(float("nan"), n=0)
    mean = float(np.mean(finite))
    std = float(np.std(finite, ddof=1)) if len(finite) > 1 else float("nan")
    reps = [r for r in replicates if r is not None]
    low = high = float("nan")
    if reps and len(reps) == len(values):
        with np.errstate(invalid="ignore"):
            low, high = percentile_interval(np.mean(np.stack(reps), axis=0))
    elif own_interval is not None and len(finite) == 1:
        low, high = own_interval
    return Cell(mean, std, len(finite), low, high)
