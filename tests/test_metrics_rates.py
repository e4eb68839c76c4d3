"""Metrics over counts with a leading resample axis: one [R, ...] call gives what R separate
runs' metrics would, checked against scikit-learn and the per-run functions."""

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score

from benevaudit.metrics.detection import detection_metrics
from benevaudit.metrics.rates import confusion_rates, detection_rates
from benevaudit.metrics.resample import draw_counts, resample
from benevaudit.schema import CLASSES


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_confusion_rates_over_a_resample_axis_match_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    runs = [(rng.integers(0, 3, 30), rng.integers(0, 3, 30)) for _ in range(5)]
    cm = np.zeros((5, 3, 3))
    for r, (t, p) in enumerate(runs):
        np.add.at(cm[r], (t, p), 1)
    rates = confusion_rates(cm)                                          # [5] per name
    for r, (t, p) in enumerate(runs):
        assert rates["test/macro_f1"][r] == pytest.approx(f1_score(t, p, average="macro"))
        for i, c in enumerate(CLASSES):
            assert rates[f"test/recall_{c}"][r] == pytest.approx(
                recall_score(t, p, labels=[i], average=None, zero_division=0)[0])
            assert rates[f"test/precision_{c}"][r] == pytest.approx(
                precision_score(t, p, labels=[i], average=None, zero_division=0)[0])


def test_macro_f1_leaves_out_a_class_neither_present_nor_predicted():
    cm = np.array([[2, 1, 0], [0, 3, 0], [0, 0, 0]])                 # BB absent and unpredicted
    f1_n, f1_ob = 2 * 2 / (3 + 2), 2 * 3 / (3 + 4)
    assert float(confusion_rates(cm)["test/macro_f1"]) == pytest.approx((f1_n + f1_ob) / 2)


def test_detection_rates_of_stacked_counts_equal_each_runs_detection_metrics():
    rng = np.random.default_rng(4)
    counts, expected = [], []
    for _ in range(6):
        labels = list(rng.choice(CLASSES, 25))
        flagged = list(rng.random(25) < 0.5)
        expected.append(detection_metrics(labels, flagged))
        k = [sum(f for lab, f in zip(labels, flagged) if lab == c) for c in CLASSES]
        n = [labels.count(c) for c in CLASSES]
        counts.append(k + n)
    rates = detection_rates(np.array(counts, dtype=float))               # [6]
    for name, values in rates.items():
        np.testing.assert_allclose(values, [m[name] for m in expected], equal_nan=True)


def test_resample_sums_groups_then_draws_whole_groups():
    groups = np.array([0, 0, 1, 2, 2, 2])
    counts = np.arange(12, dtype=float).reshape(6, 2)
    sums = resample(groups, counts, n_resamples=40, seed=3)
    draws = draw_counts(np.random.default_rng(3), 3, 40)                # the same stream
    per_group = np.array([counts[:2].sum(0), counts[2], counts[3:].sum(0)])
    np.testing.assert_array_equal(sums, draws @ per_group)
    assert (draws.sum(1) == 3).all()
