"""Confidence intervals for rates: one Wilson score interval shared by detection and the probes.

The Wilson interval stays inside [0, 1] and behaves at k = 0 and k = n, where the normal
approximation collapses to a zero-width interval; with 48 test dialogues that matters.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054   # the standard normal's 97.5% quantile


def wilson_interval(k: int | float, n: int | float, z: float = Z95) -> tuple[float, float]:
    """(low, high) of the Wilson score interval for k successes in n trials; NaNs when n = 0."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_interval needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # exactly 0 at k = 0 and 1 at k = n (rounding would leave ~1e-17 outside the rate)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    return low, (1.0 if k == n else min(1.0, centre + half))


def wilson_arrays(k: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`wilson_interval`; entries with n = 0 are NaN."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = np.where(n > 0, np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0)), np.nan)
    high = np.where(n > 0, np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0)), np.nan)
    return low, high


def newcombe_difference(k1: int | float, n1: int | float, k2: int | float, n2: int | float,
                        z: float = Z95) -> tuple[float, float]:
    """(low, high) for the difference of two independent rates k1/n1 − k2/n2, by Newcombe's
    hybrid score method (1998, method 10) from the two Wilson intervals: it stays inside
    [−1, 1] and behaves at 0 and n, as the Wilson interval does. NaNs when either n is 0.
    Used for Δ = TR_OB − TR_BB, the overt–benevolent detection gap."""
    if n1 == 0 or n2 == 0:
        return float("nan"), float("nan")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, z)
    l2, u2 = wilson_interval(k2, n2, z)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))
