"""What sections share while a report is built: cached per-run bootstrap resamples, cells for a
group of runs, and the figures runs left behind, each captioned with its run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.report.document import Cell, Figure, aggregate
from benevaudit.report.intervals import Rows
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked

Replicator = Callable[[pd.DataFrame], dict[str, np.ndarray]]


class Context:
    """Per-report caches; ``n_resamples`` = 0 switches the bootstrap off (fast previews)."""

    def __init__(self, n_resamples: int = 1000, seed: int = 0,
                 options: dict[str, dict[str, Any]] | None = None) -> None:
        self.n_resamples = n_resamples
        self.seed = seed
        self.options = options or {}   # per-section settings, by section KEY (report.<KEY>.*)
        self._reps: dict[tuple[Path, str, str], dict[str, np.ndarray]] = {}
        self.notes: list[str] = []     # problems met while rendering (unreadable files, …)

    def table_of(self, run: Run, filename: str) -> pd.DataFrame | None:
        """A run's Parquet file, or None (and a note) when it is absent or unreadable."""
        path = run.path / filename
        if not path.is_file():
            return None
        try:
            return pd.read_parquet(path)
        except Exception as e:  # noqa: BLE001 - pyarrow raises many types for a torn file
            self.notes.append(f"{run.name}: {filename} unreadable ({type(e).__name__}: {e})")
            return None

    def replicates(self, run: Run, filename: str, key: str,
                   make: Callable[[Any, int, int], dict[str, np.ndarray]],
                   want: Callable[[str], bool] | None = None) -> dict[str, np.ndarray]:
        """Bootstrap resamples of a run's metrics from one of its files (computed once).

        With ``want`` the file is read as :class:`Rows` (those columns as arrays, no
        DataFrame), else as a DataFrame."""
        cache_key = (run.path, filename, key)
        if cache_key not in self._reps:
            frame = None
            if self.n_resamples and want is not None:
                frame = self._rows(run, filename, want)
            elif self.n_resamples:
                frame = self.table_of(run, filename)
            self._reps[cache_key] = ({} if frame is None or len(frame) == 0
                                     else make(frame, self.n_resamples, self.seed))
        return self._reps[cache_key]

    def _rows(self, run: Run, filename: str, want: Callable[[str], bool]) -> Rows | None:
        path = run.path / filename
        if not path.is_file():
            return None
        try:
            return Rows.read(path, want)
        except Exception as e:  # noqa: BLE001 - pyarrow raises many types for a torn file
            self.notes.append(f"{run.name}: {filename} unreadable ({type(e).__name__}: {e})")
            return None

    def cell(self, runs: Sequence[Run], metric: str,
             reps: Sequence[dict[str, np.ndarray]] | None = None) -> Cell:
        """Mean ± std over the runs, with the bootstrap interval where the runs have rows, else
        the run's own ``<metric>_ci_low``/``_ci_high`` when it wrote them."""
        values = [r.metrics.get(metric, float("nan")) for r in runs]
        per_run = [None if reps is None else reps[i].get(metric) for i in range(len(runs))]
        own = None
        if len(runs) == 1:
            low = runs[0].metrics.get(f"{metric}_ci_low")
            high = runs[0].metrics.get(f"{metric}_ci_high")
            if low is not None and high is not None and math.isfinite(low + high):
                own = (low, high)
        return aggregate(values, per_run, own)


def figures_of(runs: Sequence[Run], patterns: Sequence[str], label: Callable[[Run], str]
               ) -> list[Figure]:
    """The PNGs matching ``patterns`` in each run, captioned ``<label> · <run> · <file>``."""
    out: list[Figure] = []
    for run in runs:
        seen: set[Path] = set()
        for pattern in patterns:
            for path in sorted(run.path.glob(pattern)):
                if path not in seen and path.suffix.lower() == ".png":
                    seen.add(path)
                    caption = f"{marked(label(run), run.record)} · run {run.name} · {path.name}"
                    out.append(Figure(path, caption))
    return out


def by_condition(runs: Sequence[Run], key: Callable[[Run], tuple]) -> dict[tuple, list[Run]]:
    """Runs grouped by a configuration key (seeds of one configuration together), in order."""
    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        groups.setdefault(key(run), []).append(run)
    return groups
