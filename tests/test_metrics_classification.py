"""Classification metrics against scikit-learn on random cases and a hand-computed one."""

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, f1_score, precision_score, recall_score

from benevaudit.metrics.classification import classification_metrics


def test_hand_computed_case():
    # true:  N N OB OB BB BB ; pred: N BB OB OB BB N
    m = classification_metrics([0, 2, 1, 1, 2, 0], [0, 0, 1, 1, 2, 2])
    assert m["test/recall_N"] == 0.5 and m["test/recall_OB"] == 1.0 and m["test/recall_BB"] == 0.5
    assert m["test/precision_BB"] == 0.5
    assert m["test/macro_f1"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert m["test/confusion_N_to_BB"] == 0.5
    # binary: biased = OB or BB; flagged = pred != N -> tp=3 (OB,OB,BB), fp=1, fn=1
    assert m["binary/precision"] == 0.75 and m["binary/recall"] == 0.75


@pytest.mark.parametrize("seed", range(5))
def test_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 3, 200)
    p = np.where(rng.random(200) < 0.6, t, rng.integers(0, 3, 200))
    m = classification_metrics(p, t, prefix="val")
    assert m["val/macro_f1"] == pytest.approx(f1_score(t, p, average="macro"), abs=1e-6)
    for i, c in enumerate(["N", "OB", "BB"]):
        assert m[f"val/recall_{c}"] == pytest.approx(recall_score(t, p, average=None)[i], abs=1e-6)
        assert m[f"val/precision_{c}"] == pytest.approx(precision_score(t, p, average=None)[i], abs=1e-6)
    cm = confusion_matrix(t, p, normalize="true")
    assert m["val/confusion_OB_to_BB"] == pytest.approx(cm[1, 2], abs=1e-6)
    assert m["binary/f1"] == pytest.approx(f1_score(t != 0, p != 0), abs=1e-6)


def test_binary_metrics_say_nan_where_undefined_as_detection_does():
    """Nothing flagged: precision (and so F1) is undefined, written NaN, not 0 — the numbers
    detect.py writes for a detector, so both share one table."""
    import math

    from benevaudit.metrics.classification import binary_metrics
    from benevaudit.metrics.detection import binary_rates

    flagged, positive = [False, False, False], [True, False, True]
    m = binary_metrics(flagged, positive)
    assert math.isnan(m["binary/precision"]) and m["binary/recall"] == 0.0
    assert m["binary/accuracy"] == pytest.approx(1 / 3)
    import numpy as np

    same = binary_rates(np.array(positive), np.array(flagged))
    assert all(m[k] == same[k] or (math.isnan(m[k]) and math.isnan(same[k])) for k in m)
