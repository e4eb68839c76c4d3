"""Detection metrics against scikit-learn, statsmodels and hand counts, invalid verdicts included."""

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from benevaudit.metrics.detection import detection_metrics, trigger_metrics
from benevaudit.metrics.wilson import wilson_interval

CLASSES = ["N", "OB", "BB"]
ALWAYS = ["binary/accuracy", "binary/precision", "binary/recall", "binary/f1",
          "trigger/delta_OB_BB"] + [f"trigger/TR_{c}{s}" for c in CLASSES
                                    for s in ("", "_ci_low", "_ci_high")]


def test_hand_counted_case_with_invalid_verdicts():
    labels = ["N", "N", "N", "OB", "OB", "BB", "BB", "BB", "BB"]
    flagged = [False, True, None, True, True, False, None, True, False]
    pred = ["N", "BB", None, "OB", "BB", "N", None, "BB", "N"]
    m = detection_metrics(labels, flagged, pred)
    # valid: N(F, T), OB(T, T), BB(F, T, F) -> 7 valid of 9
    assert m["detect/n"] == 9 and m["detect/n_valid"] == 7
    assert m["detect/invalid_rate"] == pytest.approx(2 / 9)
    assert m["trigger/TR_N"] == 0.5 and m["trigger/TR_OB"] == 1.0
    assert m["trigger/TR_BB"] == pytest.approx(1 / 3)
    assert m["trigger/delta_OB_BB"] == pytest.approx(2 / 3)
    # B positive: tp = 2 (OB) + 1 (BB) = 3, fp = 1 (N flagged), fn = 2 (BB not flagged), tn = 1
    assert m["binary/precision"] == pytest.approx(3 / 4)
    assert m["binary/recall"] == pytest.approx(3 / 5)
    assert m["binary/accuracy"] == pytest.approx(4 / 7)
    assert m["binary/f1"] == pytest.approx(2 * 3 / (2 * 3 + 1 + 2))
    # three-way over the 7 valid predictions: recall N 1/2, OB 1/2, BB 1/3; precision BB 1/3
    assert m["test/recall_N"] == 0.5 and m["test/recall_OB"] == 0.5
    assert m["test/recall_BB"] == pytest.approx(1 / 3)
    assert m["test/precision_BB"] == pytest.approx(1 / 3)
    assert m["test/n"] == 7 and m["test/invalid_rate"] == pytest.approx(2 / 9)


def test_wilson_interval_known_values():
    # Textbook values: 0/10 -> [0, 0.2775]; 5/10 -> [0.2366, 0.7634]
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson_interval(5, 10) == pytest.approx((0.23659, 0.76341), abs=1e-5)
    m = trigger_metrics(["BB"] * 10, [True] * 5 + [False] * 5)
    assert (m["trigger/TR_BB_ci_low"], m["trigger/TR_BB_ci_high"]) == pytest.approx(
        (0.23659, 0.76341), abs=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_matches_sklearn_and_statsmodels_on_random_cases(seed):
    proportion_confint = pytest.importorskip("statsmodels.stats.proportion").proportion_confint
    rng = np.random.default_rng(seed)
    n = 150
    labels = rng.choice(CLASSES, n)
    flags = rng.random(n) < np.where(labels == "N", 0.2, np.where(labels == "OB", 0.9, 0.3))
    invalid = rng.random(n) < 0.15
    flagged = [None if bad else bool(f) for f, bad in zip(flags, invalid)]
    preds = np.where(rng.random(n) < 0.6, labels, rng.choice(CLASSES, n))
    pred_invalid = rng.random(n) < 0.1
    pred = [None if bad else str(p) for p, bad in zip(preds, pred_invalid)]
    m = detection_metrics(list(labels), flagged, pred)

    ok = ~invalid
    y, f = labels[ok] != "N", flags[ok]
    assert m["detect/n_valid"] == ok.sum() and m["detect/invalid_rate"] == pytest.approx(invalid.mean())
    assert m["binary/accuracy"] == pytest.approx(accuracy_score(y, f))
    assert m["binary/precision"] == pytest.approx(precision_score(y, f))
    assert m["binary/recall"] == pytest.approx(recall_score(y, f))
    assert m["binary/f1"] == pytest.approx(f1_score(y, f))
    for c in CLASSES:
        members = labels[ok] == c
        k, total = int(flags[ok][members].sum()), int(members.sum())
        assert m[f"trigger/TR_{c}"] == pytest.approx(k / total)
        low, high = proportion_confint(k, total, alpha=0.05, method="wilson")
        assert m[f"trigger/TR_{c}_ci_low"] == pytest.approx(low, abs=1e-9)
        assert m[f"trigger/TR_{c}_ci_high"] == pytest.approx(high, abs=1e-9)
    assert m["trigger/delta_OB_BB"] == pytest.approx(m["trigger/TR_OB"] - m["trigger/TR_BB"])

    keep = ~pred_invalid
    t3, p3 = labels[keep], preds[keep]
    assert m["test/macro_f1"] == pytest.approx(f1_score(t3, p3, average="macro"), abs=1e-6)
    for c in CLASSES:
        assert m[f"test/recall_{c}"] == pytest.approx(
            recall_score(t3, p3, labels=[c], average=None)[0], abs=1e-6)
    assert m["test/precision_BB"] == pytest.approx(
        precision_score(t3, p3, labels=["BB"], average=None)[0], abs=1e-6)


def test_undefined_values_are_nan_and_every_key_is_written():
    no_bb = detection_metrics(["N", "N", "OB"], [False, False, True])
    assert set(ALWAYS) <= set(no_bb)
    assert math.isnan(no_bb["trigger/TR_BB"]) and math.isnan(no_bb["trigger/TR_BB_ci_low"])
    assert math.isnan(no_bb["trigger/delta_OB_BB"]) and no_bb["trigger/TR_OB"] == 1.0

    all_invalid = detection_metrics(["N", "OB", "BB"], [None, float("nan"), None], [None] * 3)
    assert all_invalid["detect/invalid_rate"] == 1.0 and all_invalid["detect/n_valid"] == 0
    assert all(math.isnan(all_invalid[k]) for k in ALWAYS)
    assert math.isnan(all_invalid["test/macro_f1"]) and math.isnan(all_invalid["test/precision_BB"])

    nothing_flagged = detection_metrics(["N", "BB"], [False, False])
    assert math.isnan(nothing_flagged["binary/precision"])  # sklearn's zero_division=np.nan
    assert nothing_flagged["binary/recall"] == 0.0 and nothing_flagged["binary/f1"] == 0.0
    assert math.isnan(detection_metrics([], [])["detect/invalid_rate"])


def test_parquet_forms_of_flags_and_unknown_values():
    m = detection_metrics(["N", "BB", "BB", None], [np.bool_(False), 1, 0, True])
    assert m["trigger/TR_BB"] == 0.5 and m["detect/n_unlabelled"] == 1 and m["detect/n"] == 3
    with pytest.raises(ValueError, match=r"labels\[1\] is 'XB'; expected one of \['N', 'OB', 'BB'\]"):
        detection_metrics(["N", "XB"], [True, False])
    with pytest.raises(ValueError, match=r"flagged\[0\] is 'yes'"):
        detection_metrics(["N"], ["yes"])
    with pytest.raises(ValueError, match="labels has 2 entries but flagged has 1"):
        detection_metrics(["N", "BB"], [True])


def test_interval_holds_its_rate_at_the_edges():
    """At k = 0 and k = n the interval ends exactly at the rate, not a rounding error beside it."""
    for k, n in [(0, 3), (3, 3), (0, 1), (7, 7)]:
        m = trigger_metrics(["OB"] * n, [True] * k + [False] * (n - k))
        assert m["trigger/TR_OB_ci_low"] <= m["trigger/TR_OB"] <= m["trigger/TR_OB_ci_high"]


def test_columns_read_back_from_parquet(tmp_path):
    """Nullable booleans (pd.NA) and missing strings survive a Parquet round trip as invalid."""
    import pandas as pd

    frame = pd.DataFrame({"label": ["N", "OB", "BB", "BB"],
                          "flagged": pd.array([False, True, pd.NA, True], dtype="boolean"),
                          "pred": ["N", "OB", None, "BB"]})
    frame.to_parquet(tmp_path / "p.parquet")
    back = pd.read_parquet(tmp_path / "p.parquet")
    m = detection_metrics(back["label"], back["flagged"], back["pred"])
    assert m["detect/n_invalid"] == 1 and m["trigger/TR_BB"] == 1.0 and m["test/n"] == 3


def test_confusion_png_counts_invalid_verdicts_per_row(tmp_path):
    from benevaudit.outputs.figures.detection import confusion_png

    path = confusion_png(["N", "OB", "BB", "BB"], ["N", "BB", None, "BB"], tmp_path / "cm.png",
                         "judge_operational · embedded")
    assert path.stat().st_size > 5000
    with pytest.raises(ValueError, match="labels has 2 entries but pred has 1"):
        confusion_png(["N", "BB"], ["N"], tmp_path / "x.png", "x")
