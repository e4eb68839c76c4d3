"""Transfer metrics on external human-labelled sets: AUROC against scikit-learn, the chance level by
hand, bootstrap intervals whose fast count-based paths agree with the general index bootstrap,
and per-stratum rates under their taxonomy codes."""

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from benevaudit.metrics.classification import classification_metrics
from benevaudit.metrics.transfer import (
    PAIRS, Interval, auroc, bootstrap_interval, chance_macro_f1, pair_auroc, strata_metrics,
    stratum_slug, transfer_metrics,
)
from benevaudit.schema import CLASS_INDEX, CLASSES


def random_set(n: int, seed: int, classes: tuple[str, ...] = CLASSES
               ) -> tuple[list[str], list[str], np.ndarray]:
    """Labels, predictions and Dirichlet probabilities that know nothing of the labels."""
    rng = np.random.default_rng(seed)
    labels = list(rng.choice(classes, n))
    preds = list(rng.choice(CLASSES, n))
    return labels, preds, rng.dirichlet(np.ones(3), n)


def one_hot(labels: list[str]) -> np.ndarray:
    return np.eye(3)[[CLASS_INDEX[c] for c in labels]]


@pytest.mark.parametrize("seed", range(5))
def test_auroc_matches_scikit_learn_with_ties(seed):
    rng = np.random.default_rng(seed)
    positive = rng.random(200) < 0.3
    scores = rng.integers(0, 8, 200) / 8.0                         # many ties
    assert auroc(positive, scores) == pytest.approx(roc_auc_score(positive, scores))


def test_auroc_hand_cases():
    pos = np.array([True, True, False, False])
    assert auroc(pos, np.array([0.9, 0.8, 0.2, 0.1])) == 1.0
    assert auroc(pos, np.array([0.1, 0.2, 0.8, 0.9])) == 0.0
    assert auroc(pos, np.full(4, 0.5)) == 0.5
    assert auroc(pos, np.array([0.9, 0.5, 0.5, 0.1])) == pytest.approx(0.875)  # 3.5 of 4 pairs
    assert math.isnan(auroc(np.ones(3, bool), np.arange(3.0)))
    assert math.isnan(auroc(np.zeros(0, bool), np.zeros(0)))
    with pytest.raises(ValueError, match="NaN"):
        auroc(pos, np.array([0.1, np.nan, 0.3, 0.4]))


@pytest.mark.parametrize("pos,neg", PAIRS)
def test_pair_auroc_matches_scikit_learn_on_the_two_classes(pos, neg):
    labels, _, probs = random_set(300, 7)
    probs[:, CLASS_INDEX["BB"]] += 0.3 * (np.array(labels) == "BB")   # some signal, uneven
    keep = np.isin(labels, [pos, neg])
    expected = roc_auc_score(np.array(labels)[keep] == pos, probs[keep, CLASS_INDEX[pos]])
    assert pair_auroc(labels, probs, pos, neg) == pytest.approx(expected)


def test_pair_auroc_leaves_out_unscored_and_unlabelled_items():
    labels = ["OB", "N", "OB", "N", None, "N"]
    probs = np.array([[0.1, 0.9, 0], [0.8, 0.2, 0], [0.7, 0.3, 0], [0.9, 0.1, 0],
                      [0.0, 1.0, 0], [np.nan] * 3])
    # OB scores 0.9, 0.3; N scores 0.2, 0.1: every pair ordered
    assert pair_auroc(labels, probs, "OB", "N") == 1.0
    assert math.isnan(pair_auroc(labels, probs, "BB", "N"))
    with pytest.raises(ValueError, match="shape"):
        pair_auroc(labels, probs[:, :2], "OB", "N")


def test_chance_macro_f1_by_hand():
    assert chance_macro_f1(["N", "OB", "BB"] * 10) == pytest.approx(1 / 3)
    f1_n = 2 * 0.6 / 3 / (0.6 + 1 / 3)                                 # 3/7
    f1_ob = 2 * 0.4 / 3 / (0.4 + 1 / 3)                                # 4/11
    gold = ["N"] * 60 + ["OB"] * 40 + [None] * 25
    assert chance_macro_f1(gold) == pytest.approx((f1_n + f1_ob) / 3)   # BB absent: F1 0
    assert chance_macro_f1(gold) == pytest.approx((3 / 7 + 4 / 11) / 3)
    assert math.isnan(chance_macro_f1([None, None]))
    with pytest.raises(ValueError, match="'hate'"):
        chance_macro_f1(["N", "hate"])


def test_bootstrap_interval_keeps_each_stratum_count_and_is_seeded():
    strata = np.array(["a"] * 30 + ["b"] * 10 + [None] * 5, dtype=object)
    counts: list[tuple[int, int]] = []

    def share_a(idx: np.ndarray) -> float:
        counts.append((int((strata[idx] == "a").sum()), int((strata[idx] == "b").sum())))
        return float(idx.mean())

    band = bootstrap_interval(share_a, 45, strata=strata, n_resamples=50, seed=3)
    assert set(counts) == {(30, 10)}
    assert band.value == pytest.approx(22.0)                          # mean of 0..44
    assert band.low < band.value < band.high
    assert bootstrap_interval(share_a, 45, strata=strata, n_resamples=50, seed=3) == band
    assert isinstance(band, Interval)


def test_bootstrap_interval_ignores_nan_resamples_and_needs_two_finite():
    values = np.arange(20.0)
    def odd_nan(idx: np.ndarray) -> float:
        return float("nan") if len(idx) and idx[0] % 2 else float(values[idx].mean())
    band = bootstrap_interval(odd_nan, 20, n_resamples=200, seed=0)
    assert np.isfinite([band.low, band.high]).all()
    nothing = bootstrap_interval(lambda idx: float("nan"), 20, n_resamples=20)
    assert math.isnan(nothing.low) and math.isnan(nothing.high)
    with pytest.raises(ValueError, match="strata"):
        bootstrap_interval(odd_nan, 20, strata=np.zeros(3))


def test_transfer_metrics_keys_for_three_and_two_class_sets():
    labels, preds, probs = random_set(200, 1)
    three = transfer_metrics(labels, preds, probs, n_resamples=100)
    names = {f"test/auroc_{p}_vs_{n}{s}" for p, n in PAIRS for s in ("", "_ci_low", "_ci_high")}
    assert set(three) == names | {"test/macro_f1_ci_low", "test/macro_f1_ci_high",
                                  "test/chance_macro_f1"}
    labels2, preds2, probs2 = random_set(200, 2, classes=("N", "OB"))
    two = transfer_metrics(labels2, preds2, probs2, prefix="external/edos", n_resamples=100)
    assert sorted(k for k in two if "auroc" in k) == [
        "external/edos/auroc_OB_vs_N", "external/edos/auroc_OB_vs_N_ci_high",
        "external/edos/auroc_OB_vs_N_ci_low"]
    assert set(transfer_metrics(labels, preds, None, n_resamples=100)) == {
        "test/macro_f1_ci_low", "test/macro_f1_ci_high", "test/chance_macro_f1"}


def test_transfer_metrics_interval_holds_the_reported_macro_f1_and_is_seeded():
    labels, preds, probs = random_set(500, 3)
    preds[:200] = labels[:200]                                         # better than chance
    out = transfer_metrics(labels, preds, probs, n_resamples=300, seed=5)
    codes = [CLASS_INDEX[c] for c in labels]
    point = classification_metrics([CLASS_INDEX[c] for c in preds], codes)["test/macro_f1"]
    assert out["test/macro_f1_ci_low"] < point < out["test/macro_f1_ci_high"]
    assert out["test/chance_macro_f1"] < out["test/macro_f1_ci_low"]
    for pos, neg in PAIRS:
        name = f"test/auroc_{pos}_vs_{neg}"
        assert out[name] == pytest.approx(pair_auroc(labels, probs, pos, neg))
        assert out[f"{name}_ci_low"] < out[name] < out[f"{name}_ci_high"]
    assert transfer_metrics(labels, preds, probs, n_resamples=300, seed=5) == out
    assert transfer_metrics(labels, preds, probs, n_resamples=300, seed=6) != out


def test_transfer_metrics_leaves_out_unlabelled_and_unpredicted_items():
    labels, preds, probs = random_set(150, 4)
    noisy_labels = labels + [None, "N", None]
    noisy_preds = preds + ["OB", None, None]
    noisy_probs = np.vstack([probs, [[np.nan] * 3, [np.nan] * 3, [0.2, 0.3, 0.5]]])
    assert transfer_metrics(noisy_labels, noisy_preds, noisy_probs, n_resamples=100) == \
        transfer_metrics(labels, preds, probs, n_resamples=100)


def test_a_perfect_classifier_has_auroc_one_down_to_its_interval():
    labels, _, _ = random_set(300, 5)
    out = transfer_metrics(labels, labels, one_hot(labels), n_resamples=200)
    for pos, neg in PAIRS:
        name = f"test/auroc_{pos}_vs_{neg}"
        assert out[name] == out[f"{name}_ci_low"] == out[f"{name}_ci_high"] == 1.0
    assert out["test/macro_f1_ci_low"] == out["test/macro_f1_ci_high"] == 1.0


def test_a_random_classifier_has_auroc_intervals_around_one_half():
    labels, preds, probs = random_set(6000, 6)
    out = transfer_metrics(labels, preds, probs, n_resamples=300, seed=1)
    for pos, neg in PAIRS:
        name = f"test/auroc_{pos}_vs_{neg}"
        assert out[f"{name}_ci_low"] < 0.5 < out[f"{name}_ci_high"]
        assert out[f"{name}_ci_high"] - out[f"{name}_ci_low"] < 0.06
    assert out["test/macro_f1_ci_low"] < 1 / 3 < out["test/macro_f1_ci_high"]


def test_fast_intervals_agree_with_the_general_index_bootstrap():
    labels, preds, probs = random_set(400, 8)
    preds[:150] = labels[:150]
    probs[:, 2] += 0.4 * (np.array(labels) == "BB")
    fast = transfer_metrics(labels, preds, probs, n_resamples=400, seed=0)
    gold = np.array([CLASS_INDEX[c] for c in labels])
    guess = np.array([CLASS_INDEX[c] for c in preds])
    f1 = bootstrap_interval(lambda i: classification_metrics(guess[i], gold[i])["test/macro_f1"],
                            len(gold), strata=gold, n_resamples=400, seed=1)
    assert fast["test/macro_f1_ci_low"] == pytest.approx(f1.low, abs=0.02)
    assert fast["test/macro_f1_ci_high"] == pytest.approx(f1.high, abs=0.02)
    keep = np.isin(labels, ["BB", "N"])
    bb = np.array(labels)[keep] == "BB"
    score = probs[keep, 2]
    slow = bootstrap_interval(lambda i: auroc(bb[i], score[i]), int(keep.sum()), strata=bb,
                              n_resamples=400, seed=1)
    assert fast["test/auroc_BB_vs_N"] == pytest.approx(slow.value)
    assert fast["test/auroc_BB_vs_N_ci_low"] == pytest.approx(slow.low, abs=0.02)
    assert fast["test/auroc_BB_vs_N_ci_high"] == pytest.approx(slow.high, abs=0.02)


def test_stratum_slug_takes_a_leading_code_or_a_cleaned_name():
    assert stratum_slug("3.1 casual use of gendered slurs, profanities, and insults") == "3.1"
    assert stratum_slug("4.2 supporting systemic discrimination") == "4.2"
    assert stratum_slug("2 threats") == "2"
    assert stratum_slug("  none / other!  ") == "none_other"
    assert stratum_slug("2a kept") == "2a_kept"
    assert stratum_slug("x.y-z_w") == "x.y-z_w"
    with pytest.raises(ValueError, match="no name"):
        stratum_slug("?!")


def test_strata_metrics_by_hand():
    strata = ["3.1 casual slurs", "3.1 casual slurs", "3.1 casual slurs", "none", None, "none"]
    flagged = [True, False, None, None, True, None]
    probs = np.array([[0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [np.nan] * 3,
                      [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5]])
    out = strata_metrics(strata, flagged, probs, prefix="external/edos/")
    assert out["external/edos/stratum/3.1/n"] == 3.0
    assert out["external/edos/stratum/3.1/trigger_rate"] == 0.5        # one of two valid
    assert out["external/edos/stratum/3.1/mean_p_N"] == pytest.approx(0.4)
    assert out["external/edos/stratum/3.1/mean_p_OB"] == pytest.approx(0.6)
    assert out["external/edos/stratum/none/n"] == 2.0
    assert math.isnan(out["external/edos/stratum/none/trigger_rate"])   # no valid verdict
    assert out["external/edos/stratum/none/mean_p_BB"] == pytest.approx(0.25)
    assert len(out) == 2 * 5                                            # None stratum skipped
    plain = strata_metrics(strata, flagged, None)
    assert set(plain) == {"stratum/3.1/n", "stratum/3.1/trigger_rate",
                          "stratum/none/n", "stratum/none/trigger_rate"}


def test_strata_metrics_refuses_two_strata_with_one_key_name():
    with pytest.raises(ValueError, match="share the key name 'a_b'"):
        strata_metrics(["a b", "a/b"], [True, False], None)
    with pytest.raises(ValueError, match="2 strata but 1 flags"):
        strata_metrics(["a", "b"], [True], None)


@pytest.mark.parametrize("k1,n1,k2,n2", [(30, 50, 20, 50), (159, 159, 120, 159), (0, 12, 5, 12),
                                         (7, 9, 7, 9), (3, 40, 38, 40)])
def test_the_gap_interval_is_newcombes_as_statsmodels_computes_it(k1, n1, k2, n2):
    from statsmodels.stats.proportion import confint_proportions_2indep

    from benevaudit.metrics.wilson import newcombe_difference

    low, high = newcombe_difference(k1, n1, k2, n2)
    ref = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb")
    assert (low, high) == pytest.approx((float(ref[0]), float(ref[1])), abs=1e-9)


def test_detection_metrics_carry_the_gap_interval():
    from benevaudit.metrics.detection import detection_metrics

    labels = ["OB"] * 10 + ["BB"] * 10 + ["N"] * 4
    flagged = [True] * 9 + [False] + [True] * 3 + [False] * 7 + [False] * 4
    m = detection_metrics(labels, flagged)
    assert m["trigger/delta_OB_BB"] == pytest.approx(0.6)
    assert m["trigger/delta_OB_BB_ci_low"] < 0.6 < m["trigger/delta_OB_BB_ci_high"]
    assert m["trigger/delta_OB_BB_ci_low"] > 0      # 9/10 against 3/10 is a real gap
