"""95% bootstrap intervals for study-table cells, from a run's per-dialogue predictions.

The embedded test split holds 48 dialogues: one dialogue moves a recall by six points, so every
cell of a study table carries an interval. Resampling is by matched triplet where the rows
allow it (the N, OB and BB dialogues of one condition are drawn together, as the splits keep
them together): a ``triplet`` column if the run wrote one, else the condition columns that
``predictions.parquet`` carries (role, generator, user_*, agent), else single rows.

Vectorised by :mod:`benevaudit.metrics.resample`: rows are summed into per-group count rows
``C`` [G, K]; a resample draws G groups with replacement and its counts are ``draws @ C``
[R, K]; every metric is then the formula of :mod:`benevaudit.metrics.rates` that the run's
``metrics.json`` used, for all R resamples at once.
Seeds of one configuration combine by averaging the r-th resample of each run, which gives the
interval of the mean that the table shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, Union

import numpy as np
import pandas as pd

from benevaudit.metrics.rates import confusion_rates, detection_rates
from benevaudit.metrics.resample import resample
from benevaudit.schema import CLASSES

N_RESAMPLES = 1000
CONDITION_COLUMNS = ("role", "generator", "agent")
K = len(CLASSES)


class Rows:
    """Columns of a run's Parquet file as plain object arrays: the bootstrap reads a few
    columns of many small files, where building a DataFrame would cost more than the work."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self._columns = columns
        self.columns = list(columns)

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name]

    def __len__(self) -> int:
        return len(next(iter(self._columns.values()))) if self._columns else 0

    @classmethod
    def read(cls, path: object, want: Callable[[str], bool] | None = None) -> Rows:
        """The columns ``want(name)`` keeps (all when None) of one Parquet file."""
        import pyarrow.parquet as pq  # pyarrow loads on first use; the core stays light

        file = pq.ParquetFile(path)
        names = [n for n in file.schema_arrow.names if want is None or want(n)]
        table = file.read(columns=names, use_threads=False)
        return cls({n: table.column(n).to_numpy(zero_copy_only=False) for n in names})


Table: TypeAlias = Union[pd.DataFrame, Rows]


def _values(frame: Table, column: str) -> np.ndarray:
    return np.asarray(frame[column], dtype=object)


def group_index(frame: Table) -> np.ndarray:
    """[n] resampling unit of each row: its matched triplet where known, else the row itself."""
    if "triplet" in frame.columns:
        keys = [k if isinstance(k, (str, int)) else repr(k) for k in _values(frame, "triplet")]
        return pd.factorize(np.asarray(keys, dtype=object))[0]
    cols = [c for c in frame.columns if c in CONDITION_COLUMNS or c.startswith("user_")]
    if {"role", "generator"} <= set(cols):
        index: dict[tuple, int] = {}     # plain tuples: far cheaper than a groupby on small frames
        rows = zip(*(_values(frame, c).tolist() for c in cols))
        return np.fromiter((index.setdefault(k, len(index)) for k in rows), dtype=np.int64,
                           count=len(frame))
    return np.arange(len(frame))


def wanted(column: str) -> bool:
    """The prediction columns the bootstrap reads (labels, verdicts and the condition)."""
    return (column in ("label", "pred", "flagged", "triplet", *CONDITION_COLUMNS)
            or column.startswith("user_"))


def _codes(values: object) -> np.ndarray:
    index = {c: i for i, c in enumerate(CLASSES)}
    return np.array([index.get(v, -1) if isinstance(v, str) else -1
                     for v in np.asarray(values, dtype=object).tolist()], dtype=np.int64)


def classification_replicates(frame: Table, prefix: str = "test",
                              n_resamples: int = N_RESAMPLES, seed: int = 0
                              ) -> dict[str, np.ndarray]:
    """Macro-F1, accuracy, per-class recall/precision/F1 of ``label`` vs ``pred``, per resample."""
    if not {"label", "pred"} <= set(frame.columns):
        return {}
    y, p = _codes(frame["label"]), _codes(frame["pred"])
    keep = (y >= 0) & (p >= 0)
    counts = np.zeros((len(frame), K * K))
    counts[np.flatnonzero(keep), (y * K + p)[keep]] = 1.0   # one-hot confusion cell per row
    cm = resample(group_index(frame), counts, n_resamples, seed).reshape(-1, K, K)  # [R, true, pred]
    return confusion_rates(cm, prefix, CLASSES, undefined=np.nan)


def flags_of(frame: Table) -> np.ndarray | None:
    """[n] 1.0 flagged, 0.0 not, NaN invalid: the ``flagged`` column, else pred ∈ {OB, BB}."""
    if "flagged" in frame.columns:
        return np.array([np.nan if v is None or (isinstance(v, float) and np.isnan(v))
                         else float(bool(v)) for v in _values(frame, "flagged").tolist()])
    if "pred" in frame.columns:
        p = _codes(frame["pred"])
        return np.where(p >= 0, (p != CLASSES.index("N")).astype(float), np.nan)
    return None


def detection_replicates(frame: Table, n_resamples: int = N_RESAMPLES, seed: int = 0
                         ) -> dict[str, np.ndarray]:
    """Binary B-vs-N rates and per-class trigger rates (invalid verdicts left out), per resample."""
    flags = flags_of(frame)
    if flags is None or "label" not in frame.columns:
        return {}
    y = _codes(frame["label"])
    ok = (y >= 0) & ~np.isnan(flags)
    counts = np.zeros((len(frame), 2 * K))                  # flagged per class, then valid per class
    rows = np.flatnonzero(ok)
    counts[rows, y[ok]] = flags[ok]
    counts[rows, K + y[ok]] = 1.0
    return detection_rates(resample(group_index(frame), counts, n_resamples, seed))  # [R, 2K]


def percentile_interval(replicates: np.ndarray) -> tuple[float, float]:
    """The 2.5–97.5 percentile band, ignoring resamples where the metric is undefined."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size < max(10, replicates.size // 2):
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)
