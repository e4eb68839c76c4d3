"""How many items per class a comparison of two rates needs: Fleiss's sample size.

For the two-sided test of two independent proportions p1 and p2 at level α with power 1 − β,
without continuity correction (Fleiss, Levin and Paik, *Statistical Methods for Rates and
Proportions*, 3rd ed., ch. 4):

    n = [z_{1−α/2}·√(2·p̄·(1 − p̄)) + z_{1−β}·√(p1(1 − p1) + p2(1 − p2))]² / (p1 − p2)²

per group, p̄ = (p1 + p2)/2, rounded up. The first term is the test's spread under the null
(both groups at p̄), the second its spread under the alternative. statsmodels'
``samplesize_proportions_2indep_onetail`` gives the same unrounded number. ``NormalIndPower``
differs: with the effect (p2 − p1)/√(p̄(1 − p̄)) it uses the null's spread for both terms and
asks for about one item more (357 against 356 for 0.3 against 0.4); with Cohen's arcsine h it
asks for fewer near 0 or 1 (133 against 141 for 0.05 against 0.15).

A paired comparison of two runs over the same items needs no more items than this when the
runs' verdicts are positively correlated, so it is a safe plan for those too.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple


class PowerPlan(NamedTuple):
    """The items per class a comparison needs, and what it was computed from."""

    items_per_class: int
    base_rate: float      # p1
    other_rate: float     # p2 = p1 + effect
    alpha: float
    power: float


def fleiss_n(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Fleiss's n per group (unrounded) for the two-sided test of p1 against p2."""
    if not (0 <= p1 <= 1 and 0 <= p2 <= 1) or p1 == p2:
        raise ValueError(f"fleiss_n needs two different rates in [0, 1], got {p1} and {p2}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"fleiss_n needs alpha and power in (0, 1), got {alpha}, {power}")
    z = NormalDist().inv_cdf
    mean = (p1 + p2) / 2
    spread = (z(1 - alpha / 2) * math.sqrt(2 * mean * (1 - mean))
              + z(power) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)))
    return spread ** 2 / (p1 - p2) ** 2


def items_per_class(base_rate: float, effect: float, alpha: float = 0.05, power: float = 0.8
                    ) -> PowerPlan:
    """The plan for detecting an absolute change ``effect`` from ``base_rate``: Fleiss's n
    rounded up (a float error of 1e-9 above a whole number does not add an item)."""
    other = base_rate + effect
    if not 0 <= other <= 1:
        raise ValueError(f"base rate {base_rate} + effect {effect} = {other} is not a rate in "
                         f"[0, 1]")
    n = fleiss_n(base_rate, other, alpha, power)
    return PowerPlan(math.ceil(n - 1e-9), base_rate, other, alpha, power)
