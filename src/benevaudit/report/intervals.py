"""95% bootstrap intervals for study-table cells, from a run's per-dialogue predictions.

The embedded test split holds 48 dialogues: one dialogue moves a recall by six points, so every
cell of a study table carries an interval. Resampling is by matched triplet where the rows
allow it (the N, OB and BB dialogues of one condition are drawn together, as the splits keep
them together): a ``triplet`` column if the run wrote one, else the condition columns that
``predictions.parquet`` carries (role, generator, user_*, agent), else single rows.

Vectorised as in :mod:`benevaudit.metrics.bootstrap`: rows are summed into per-group count
rows ``C`` [G, K]; a resample draws G groups with replacement and its counts are
``draws @ C`` [R, K]; every metric is then a formula on counts, for all R resamples at once.
Seeds of one configuration combine by averaging the r-th resample of each run, which gives the
interval of the mean that the table shows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    def read(cls, path: object, want: object = None) -> Rows:
        """The columns ``want(name)`` keeps (all when None) of one Parquet file."""
        import pyarrow.parquet as pq

        file = pq.ParquetFile(path)
        names = [n for n in file.schema_arrow.names if want is None or want(n)]
        table = file.read(columns=names, use_threads=False)
        return cls({n: table.column(n).to_numpy(zero_copy_only=False) for n in names})


Table = pd.DataFrame | Rows


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
        keys = zip(*(_values(frame, c).tolist() for c in cols))
        return np.fromiter((index.setdefault(k, len(index)) for k in keys), dtype=np.int64,
                           count=len(frame))
    return np.arange(len(frame))


def wanted(column: str) -> bool:
    """The prediction columns the bootstrap reads (labels, verdicts and the condition)."""
    return (column in ("label", "pred", "flagged", "triplet", *CONDITION_COLUMNS)
            or column.startswith("user_"))


def resample(groups: np.ndarray, counts: np.ndarray, n_resamples: int = N_RESAMPLES,
             seed: int = 0) -> np.ndarray:
    """[R, K] summed counts of R resamples of the groups (with replacement)."""
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    per_group = np.zeros((n_groups, counts.shape[1]))
    np.add.at(per_group, groups, counts)                   # [G, K]
    if n_groups == 0:
        return np.zeros((n_resamples, counts.shape[1]))
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, counts.shape[1]))
    step = max(1, 4_000_000 // n_groups)                   # bounded memory for big test sets
    for start in range(0, n_resamples, step):
        r = min(step, n_resamples - start)
        out[start:start + r] = draw_counts(rng, n_groups, r) @ per_group
    return out


def draw_counts(rng: np.random.Generator, n_groups: int, n_resamples: int) -> np.ndarray:
    """[R, G] how often each group is drawn when G groups are drawn with replacement, R times
    (indices, then one bincount over row-offset indices: cheaper than a multinomial per row)."""
    picks = rng.integers(0, n_groups, size=(n_resamples, n_groups))
    flat = (picks + np.arange(n_resamples)[:, None] * n_groups).ravel()
    return np.bincount(flat, minlength=n_resamples * n_groups).reshape(n_resamples, n_groups)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where den is 0 (an undefined rate, not a zero one)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


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
    tp = np.diagonal(cm, axis1=1, axis2=2)                  # [R, K]
    support, predicted = cm.sum(2), cm.sum(1)
    recall, precision = ratio(tp, support), ratio(tp, predicted)
    f1 = np.nan_to_num(ratio(2 * tp, support + predicted))   # 0 where a class is absent, as torchmetrics
    out = {f"{prefix}/macro_f1": f1.mean(1), f"{prefix}/accuracy": ratio(tp.sum(1), cm.sum((1, 2)))}
    for i, c in enumerate(CLASSES):
        out[f"{prefix}/recall_{c}"] = recall[:, i]
        out[f"{prefix}/precision_{c}"] = precision[:, i]
        out[f"{prefix}/f1_{c}"] = f1[:, i]
    return out


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
    c = resample(group_index(frame), counts, n_resamples, seed)   # [R, 2K]
    flagged, valid = c[:, :K], c[:, K:]
    n = CLASSES.index("N")
    tp = flagged.sum(1) - flagged[:, n]
    fp = flagged[:, n]
    fn = (valid.sum(1) - valid[:, n]) - tp
    tn = valid[:, n] - fp
    out = {"binary/accuracy": ratio(tp + tn, valid.sum(1)), "binary/precision": ratio(tp, tp + fp),
           "binary/recall": ratio(tp, tp + fn), "binary/f1": ratio(2 * tp, 2 * tp + fp + fn)}
    for i, cls in enumerate(CLASSES):
        out[f"trigger/TR_{cls}"] = ratio(flagged[:, i], valid[:, i])
    out["trigger/delta_OB_BB"] = out["trigger/TR_OB"] - out["trigger/TR_BB"]
    return out


def rate_replicates(units: np.ndarray, hits: np.ndarray, valid: np.ndarray,
                    n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """[R] share of hits among valid rows, resampling ``units`` (e.g. probe items)."""
    counts = np.stack([hits * valid, valid], axis=1).astype(float)
    c = resample(pd.factorize(units)[0], counts, n_resamples, seed)
    return ratio(c[:, 0], c[:, 1])


def percentile_interval(replicates: np.ndarray) -> tuple[float, float]:
    """The 2.5–97.5 percentile band, ignoring resamples where the metric is undefined."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size < max(10, replicates.size // 2):
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)
