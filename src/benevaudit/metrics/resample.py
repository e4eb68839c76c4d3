"""The one bootstrap engine: resampled sums of per-unit count rows, vectorised.

Rows (dialogues, probe items) are summed into per-unit count rows ``C`` [G, C] (a unit is a
matched triplet, an item, or a row); a resample draws units with replacement and its counts
are ``draws @ C`` [R, C], where ``draws`` [R, G] says how often each unit was drawn. Every
metric of :mod:`benevaudit.metrics.rates` then takes those [R, ...] counts at once.

Two exact ways to draw the same thing:

- ``index`` (:func:`draw_counts`, :func:`resample_sums`): draw unit indices [R, k] with
  ``rng.integers``; ``bincount`` over row-offset indices gives ``draws`` for a batch of R
  resamples at once. Cost grows with R·k.
- ``types`` (:func:`distinct_rows`, :func:`type_resample_sums`): units with the same count row
  are interchangeable, so drawing k units uniformly draws each distinct row a
  Multinomial(k, share of the pool) number of times. Cost grows with R·U, U the number of
  distinct rows, not with k.
"""

from __future__ import annotations

import numpy as np

BATCH_ELEMENTS = 4_000_000  # index and count entries per batch: ~32 MB each, whatever the sizes
METHODS: tuple[str, ...] = ("auto", "types", "index")


def draw_counts(rng: np.random.Generator, n_units: int, n_resamples: int,
                size: int | None = None) -> np.ndarray:
    """[R, G] how often each of G units is drawn when ``size`` (default G) units are drawn with
    replacement, R times (indices, then one bincount over row-offset indices: cheaper than a
    multinomial per row when G is large)."""
    picks = rng.integers(0, n_units, size=(n_resamples, n_units if size is None else size))
    flat = (picks + np.arange(n_resamples)[:, None] * n_units).ravel()
    return np.bincount(flat, minlength=n_resamples * n_units).reshape(n_resamples, n_units)


def resample_sums(counts: np.ndarray, size: int, n_resamples: int,
                  rng: np.random.Generator) -> np.ndarray:
    """[n_resamples, C] sums of ``size`` unit rows of ``counts`` [G, C] drawn with replacement
    (the index way), in batches of bounded memory."""
    n_units = counts.shape[0]
    per_batch = max(1, BATCH_ELEMENTS // max(size, n_units))
    out = np.empty((n_resamples, counts.shape[1]))
    for start in range(0, n_resamples, per_batch):
        rows = min(per_batch, n_resamples - start)
        out[start:start + rows] = draw_counts(rng, n_units, rows, size) @ counts
    return out


def group_sums(groups: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """[G, C] count rows summed per unit; ``groups`` [n] holds each row's unit index."""
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    per_group = np.zeros((n_groups, counts.shape[1]))
    np.add.at(per_group, groups, counts)
    return per_group


def resample(groups: np.ndarray, counts: np.ndarray, n_resamples: int = 1000,
             seed: int = 0) -> np.ndarray:
    """[R, C] summed counts of R resamples of all G units (with replacement), seeded."""
    per_group = group_sums(groups, counts)
    if per_group.shape[0] == 0:
        return np.zeros((n_resamples, counts.shape[1]))
    rng = np.random.default_rng(seed)
    return resample_sums(per_group, per_group.shape[0], n_resamples, rng)


def distinct_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(types [U, C], share [U]): the pool's distinct count rows and the share of units with
    each. Rows of small counts are keyed as one integer, which sorts far faster than
    ``np.unique(axis=0)``."""
    base = int(counts.max()) + 1 if counts.size else 1
    if base ** counts.shape[1] < 2 ** 62:
        keys = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, n = np.unique(keys, return_index=True, return_counts=True)
        return counts[first], n / counts.shape[0]
    types, n = np.unique(counts, axis=0, return_counts=True)
    return types, n / counts.shape[0]


def type_resample_sums(types: np.ndarray, share: np.ndarray, size: int, n_resamples: int,
                       rng: np.random.Generator) -> np.ndarray:
    """The same draw as :func:`resample_sums` through the pool's distinct unit rows."""
    draws = rng.multinomial(size, share, size=n_resamples)              # [R, U]
    return draws @ types


def pick_method(method: str, distinct: int, size: int) -> str:
    """``auto``: ``types`` unless the pool has nearly as many distinct rows as a draw has
    units (a multinomial category costs about three index draws)."""
    if method not in METHODS:
        raise ValueError(f"bootstrap: unknown method {method!r}; valid: {', '.join(METHODS)}")
    if method == "auto":
        return "types" if 3 * distinct <= size or distinct <= 1024 else "index"
    return method
