"""Paired tests of two runs over the same items, and Holm's correction across them.

Two runs that judged the same items differ only where an item's verdict changed, so the tests
condition on those discordant items:

- :func:`mcnemar`: McNemar's test of one binary verdict (a trigger rate, a bias rate), exact:
  under no change each of the b + c discordant items flips either way with probability 1/2,
  p = min(1, 2·P[Bin(b + c, 1/2) ≤ min(b, c)]) (statsmodels' ``mcnemar(exact=True)``);
  ``mid_p=True`` subtracts the observed point's probability once (Fagerland et al., 2013).
- :func:`signflip`: the paired permutation (sign-flip) test of a statistic that is a sum of
  per-item changes, ``T = Σ w_i·(y_B,i − y_A,i)``: a rate difference (w = 1/n) or a disparity
  such as Δ(OB−BB) = TR_OB − TR_BB (w = 1/n_OB on OB items, −1/n_BB on BB items). Swapping an
  item's two verdicts flips the sign of its term, so items with equal |term| form a group whose
  sum is v·(2K − m), K ~ Bin(m, 1/2); the exact null is the convolution of the groups, and
  Binomial draws replace it when its support is large. For one rate it is McNemar's exact test.
- :func:`swap_test`: the same permutation for any statistic of the two runs' predictions
  (macro-F1): swaps of the discordant items' predictions, all of them when there are at most
  ``n_resamples`` (exact), else ``n_resamples`` random ones with p = (hits + 1) / (R + 1), the
  convention of ``scipy.stats.permutation_test``.
- :func:`holm`: Holm's step-down adjustment across a family of p-values.

Two-sided p-values count the null values at least as far from 0 as the observed one, with a
relative tolerance so that ties in floating point count as ties.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import binom

TOLERANCE = 1e-9          # relative: |T*| ≥ |T|·(1 − tol) counts as at least as extreme
MAX_SUPPORT = 2_000_000   # exact sign-flip null up to this many support points
BATCH = 2_000_000         # swap patterns × items per batch of the swap test

Statistic = Callable[[np.ndarray], np.ndarray]   # predictions [R, n] -> statistic [R]


def mcnemar(b: int, c: int, mid_p: bool = False) -> float:
    """Two-sided exact McNemar p-value of b items flagged by A only and c by B only."""
    m, k = b + c, min(b, c)
    if m == 0:
        return 1.0
    p = 2 * binom.cdf(k, m, 0.5)
    if mid_p:
        p -= binom.pmf(k, m, 0.5)
    return float(min(1.0, p))


def _at_least(null: np.ndarray, observed: float) -> np.ndarray:
    return np.abs(null) >= abs(observed) * (1 - TOLERANCE)


def signflip(terms: np.ndarray, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided sign-flip p-value of ``T = Σ terms`` (each item's weighted change B − A),
    exact while the null has at most ``MAX_SUPPORT`` points, else from ``n_resamples``
    binomial draws per group."""
    terms = np.asarray(terms, dtype=float)
    terms = terms[terms != 0]
    if len(terms) == 0:
        return 1.0
    observed = float(terms.sum())
    size, m = np.unique(np.round(np.abs(terms), 12), return_counts=True)   # groups [G]
    if np.prod(m + 1.0) <= MAX_SUPPORT:
        values, probs = np.zeros(1), np.ones(1)
        for v, k in zip(size, m):
            K = np.arange(k + 1)
            values = (values[:, None] + v * (2 * K - k)[None, :]).ravel()
            probs = (probs[:, None] * binom.pmf(K, k, 0.5)[None, :]).ravel()
        return float(min(1.0, probs[_at_least(values, observed)].sum()))
    rng = np.random.default_rng(seed)
    draws = rng.binomial(m[None, :], 0.5, size=(n_resamples, len(m)))          # [R, G]
    null = (size[None, :] * (2 * draws - m[None, :])).sum(1)                    # [R]
    return float((_at_least(null, observed).sum() + 1) / (n_resamples + 1))


def _patterns(m: int, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """([P, m] swap patterns of m discordant items, exact): all 2^m, or ``n_resamples`` drawn."""
    if m < 63 and 2 ** m <= n_resamples:
        codes = np.arange(2 ** m)[:, None]
        return ((codes >> np.arange(m)[None, :]) & 1).astype(bool), True
    return rng.random((n_resamples, m)) < 0.5, False


def swap_test(pred_a: np.ndarray, pred_b: np.ndarray, statistic: Statistic,
              n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired permutation p-value of ``statistic(B) − statistic(A)``: each item's two
    predictions swapped or not, over the items where they differ (swapping equal ones changes
    nothing). ``statistic`` takes predictions [R, n] and returns [R]; an item may be a row
    ([n, k] predictions, ``statistic`` taking [R, n, k]), swapped whole."""
    pred_a, pred_b = np.asarray(pred_a), np.asarray(pred_b)
    observed = float(statistic(pred_b[None])[0] - statistic(pred_a[None])[0])
    differ = np.flatnonzero((pred_a != pred_b).reshape(len(pred_a), -1).any(1))
    if len(differ) == 0:
        return 1.0
    patterns, exact = _patterns(len(differ), n_resamples, np.random.default_rng(seed))
    per_batch = max(1, BATCH // pred_a.size)
    hits = 0
    for start in range(0, len(patterns), per_batch):
        swap = patterns[start:start + per_batch]                                # [P, m]
        swap = swap.reshape(swap.shape + (1,) * (pred_a.ndim - 1))              # [P, m, 1…]
        a = np.repeat(pred_a[None], len(swap), 0)                               # [P, n, …]
        b = np.repeat(pred_b[None], len(swap), 0)
        a[:, differ] = np.where(swap, pred_b[differ], pred_a[differ])
        b[:, differ] = np.where(swap, pred_a[differ], pred_b[differ])
        hits += int(_at_least(statistic(b) - statistic(a), observed).sum())
    if exact:
        return float(min(1.0, hits / len(patterns)))
    return float((hits + 1) / (n_resamples + 1))


def holm(p_values: np.ndarray | list[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input's order; NaN entries stay NaN and are
    not counted in the family."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    stepped = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return out
