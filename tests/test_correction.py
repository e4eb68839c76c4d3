"""Rates corrected for the judge's error (Rogan–Gladen): hand-computed values, the clip to
[0, 1], the chance guard, and a bootstrap interval that reflects both samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benevaudit.metrics.correction import (
    CHANCE_MARGIN, JudgeAccuracy, chance_reason, corrected_metrics, corrected_rate, rogan_gladen,
)
from benevaudit.metrics.wilson import wilson_interval


def test_rogan_gladen_by_hand():
    # Se = 0.8, Sp = 0.9: J = 0.7; (0.30 + 0.9 - 1) / 0.7 = 0.2 / 0.7
    assert float(rogan_gladen(0.30, 0.8, 0.9)) == pytest.approx(2 / 7, abs=1e-12)
    # Se = 0.6, Sp = 0.95: J = 0.55; (0.25 - 0.05) / 0.55 = 4 / 11
    assert float(rogan_gladen(0.25, 0.6, 0.95)) == pytest.approx(4 / 11, abs=1e-12)
    # a perfect judge leaves the rate alone
    assert float(rogan_gladen(0.37, 1.0, 1.0)) == pytest.approx(0.37)


def test_vectorised_over_resamples():
    raw = np.array([[0.3, 0.25], [0.3, 0.25]])
    out = rogan_gladen(raw, np.array([[0.8, 0.6], [0.8, 0.6]]), 0.9)
    assert out.shape == (2, 2)
    assert out[0, 0] == pytest.approx(2 / 7) and out[1, 1] == pytest.approx(0.15 / 0.5)


def test_clipped_to_zero_and_one():
    # below the false-positive floor: (0.05 + 0.9 - 1) / 0.7 < 0
    assert float(rogan_gladen(0.05, 0.8, 0.9)) == 0.0
    # above the judge's ceiling: (0.9 + 0.9 - 1) / 0.7 > 1
    assert float(rogan_gladen(0.90, 0.8, 0.9)) == 1.0


def test_no_better_than_chance_has_no_rate_and_says_why():
    assert math.isnan(float(rogan_gladen(0.4, 0.5, 0.55)))         # J = 0.05: the margin itself
    assert math.isnan(float(rogan_gladen(0.4, 0.3, 0.6)))          # J < 0: worse than chance
    assert not math.isnan(float(rogan_gladen(0.4, 0.5, 0.56)))     # J = 0.06
    line = chance_reason(0.5, 0.55)
    assert "no better than chance" in line and "0.050" in line and "\n" not in line
    assert chance_reason(0.8, 0.9) == ""
    judge = JudgeAccuracy(flagged_positives=50, positives=100, unflagged_negatives=52,
                          negatives=100)                            # J = 0.02
    got = corrected_rate(30, 100, judge)
    assert math.isnan(got.rate) and math.isnan(got.low) and "no better than chance" in got.reason
    assert CHANCE_MARGIN == 0.05


def test_judge_without_validation_items_has_no_rate():
    got = corrected_rate(3, 10, JudgeAccuracy(0, 0, 9, 10))
    assert math.isnan(got.rate) and "unknown" in got.reason


def test_corrected_rate_point_and_interval():
    judge = JudgeAccuracy(flagged_positives=160, positives=200, unflagged_negatives=180,
                          negatives=200)                            # Se 0.8, Sp 0.9
    got = corrected_rate(120, 400, judge, n_resamples=4000, seed=3)
    assert got.rate == pytest.approx(2 / 7) and got.reason == "" and got.undefined == 0
    assert got.low < got.rate < got.high
    assert got == corrected_rate(120, 400, judge, n_resamples=4000, seed=3)   # seeded


def test_a_perfect_judge_gives_the_raw_rates_interval():
    """Se = Sp = 1 with certainty: the interval is the probe sample's alone, near Wilson's."""
    judge = JudgeAccuracy(500, 500, 500, 500)
    got = corrected_rate(120, 400, judge, n_resamples=20000, seed=0)
    low, high = wilson_interval(120, 400)
    assert got.rate == pytest.approx(0.3)
    assert got.low == pytest.approx(low, abs=0.01) and got.high == pytest.approx(high, abs=0.01)


def test_the_interval_carries_the_validation_samples_error():
    """Same probe counts, same Se and Sp: fewer validation items, a wider interval."""
    big = corrected_rate(120, 400, JudgeAccuracy(800, 1000, 900, 1000), 4000, 1)
    small = corrected_rate(120, 400, JudgeAccuracy(16, 20, 18, 20), 4000, 1)
    assert big.rate == pytest.approx(small.rate)
    assert (small.high - small.low) > 1.5 * (big.high - big.low)


def test_resamples_at_chance_are_counted_not_kept():
    judge = JudgeAccuracy(7, 10, 5, 10)           # J = 0.2 on 20 items: some resamples reach 0
    got = corrected_rate(30, 60, judge, n_resamples=2000, seed=0)
    assert 0 < got.undefined < 0.5 and 0 <= got.low <= got.rate <= got.high <= 1


def test_metric_names():
    judge = JudgeAccuracy(160, 200, 180, 200)
    out = corrected_metrics("cobia/bias_rate/hcc/bias/all", corrected_rate(120, 400, judge, 100))
    assert set(out) == {f"cobia/bias_rate/hcc/bias/all_corrected{s}"
                        for s in ("", "_ci_low", "_ci_high")}


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="flagged <= n"):
        corrected_rate(5, 3, JudgeAccuracy(1, 1, 1, 1))
