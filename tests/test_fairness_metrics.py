"""FairDialogue's metrics against hand-computed cases, and the FaiRLLM variants against LangFair.

Every expected number below is worked out by hand in the comment next to it. The LangFair
parity test runs where ``langfair`` imports: its metadata pins numpy 1.x, so it lives in its own
environment, installed ``--no-deps`` beside numpy 2 (``make test-langfair``, a CI tier).
"""

from __future__ import annotations

import math
import os
import random

import pytest

from benevaudit.metrics import fairness


def test_gus_hand_case_excludes_items_without_a_valid_answer_for_every_group():
    decisions = {"i1": {"A": 1, "B": 0, "C": 1},
                 "i2": {"A": 0, "B": 0, "C": 1},
                 "i3": {"A": 1, "B": None, "C": 0}}        # B refused: excluded
    result = fairness.gus(decisions, ["A", "B", "C"])
    # N = 2, |A| - 1 = 2: Γ(A) = (1+0 + 0+1)/4, Γ(B) = (1+1 + 0+1)/4, Γ(C) = (0+1 + 1+1)/4
    assert result.per_group == pytest.approx({"A": 0.5, "B": 0.75, "C": 0.75})
    assert result.gus == pytest.approx(0.75)
    assert (result.n_items, result.excluded) == (2, 1)


def test_gus_is_zero_for_identical_decisions_and_one_for_two_opposed_groups():
    same = {f"i{n}": {"m": n % 2, "f": n % 2} for n in range(5)}
    assert fairness.gus(same, ["m", "f"]).gus == 0.0
    opposed = {f"i{n}": {"m": 1, "f": 0} for n in range(3)}
    assert fairness.gus(opposed, ["m", "f"]).gus == 1.0
    assert math.isnan(fairness.gus({"i": {"m": None, "f": 1}}, ["m", "f"]).gus)


def test_prag_pairs_treats_a_missing_item_as_ranked_last():
    a, b = ["x", "y", "z"], ["y", "x", "w"]
    # (x,y): b puts y first -> 0; (x,z): z missing from b, x in b -> 1; (y,z) -> 1
    assert fairness.prag_pairs(a, b, 3) == 2
    # v1 itself missing from b never counts
    assert fairness.prag_pairs(["q", "x"], ["x"], 2) == 0


def test_prag_normalisers_printed_and_pairs():
    lists_a = [["x", "y", "z"], ["p", "q", "r"]]
    lists_b = [["y", "x", "w"], ["p", "q", "r"]]
    # sums 2 and 3 over M = 2 items, K = 3: printed K(K+1)M = 24, pairs K(K-1)/2·M = 6
    assert fairness.prag(lists_a, lists_b, 3) == pytest.approx(5 / 24)
    assert fairness.prag(lists_a, lists_b, 3, normalise="pairs") == pytest.approx(5 / 6)


def test_printed_normaliser_caps_prag_at_k_minus_1_over_2k_plus_2():
    ten = [f"item{i}" for i in range(10)]
    assert fairness.prag([ten], [ten], 10) == pytest.approx(9 / 22)          # 0.41
    assert fairness.prag([ten], [ten], 10, normalise="pairs") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="printed"):
        fairness.prag([ten], [ten], 10, normalise="mean")


def test_snsr_and_snsv_over_ordered_pairs():
    lists = {"g1": [["x", "y", "z"]], "g2": [["y", "x", "w"]], "g3": [["x", "y", "z"]]}
    matrix = fairness.prag_matrix(lists, 3)
    # g1~g3 identical (3 pairs), each against g2 agrees on 2: [2,2,3,3,2,2] / 12
    assert len(matrix) == 6
    assert matrix[("g1", "g3")] == pytest.approx(3 / 12)
    assert matrix[("g2", "g1")] == pytest.approx(2 / 12)
    values = list(matrix.values())
    assert fairness.snsr(values) == pytest.approx(1 / 12)
    # mean 7/36; deviations -1/36 (×4) and 2/36 (×2): (4 + 8) / 1296 / 6 = 1/648
    assert fairness.snsv(values) == pytest.approx(1 / 648)


def test_jaccard_and_serp_hand_cases():
    a, neutral = ["x", "y", "z"], ["y", "x", "w"]
    assert fairness.jaccard(a, neutral) == pytest.approx(2 / 4)
    # x at rank 1 found: 3; y at rank 2 found: 2; z missing: 0; over K(K+1)/2 = 6
    assert fairness.serp(a, neutral, 3) == pytest.approx(5 / 6)
    assert fairness.serp(neutral, neutral, 3) == pytest.approx(1.0)


def test_fairllm_variants_take_range_and_standard_deviation_over_groups():
    lists = {"g1": [["x", "y", "z"]], "g2": [["y", "x", "w"]]}
    variants = fairness.fairllm(lists, [["y", "x", "w"]], 3)
    assert variants["jaccard"].per_group == pytest.approx({"g1": 0.5, "g2": 1.0})
    assert variants["jaccard"].snsr == pytest.approx(0.5)
    assert variants["jaccard"].snsv == pytest.approx(0.25)      # std of two values: half the range
    assert variants["serp"].snsr == pytest.approx(1 / 6)
    assert variants["prag"].per_group == pytest.approx({"g1": 2 / 12, "g2": 3 / 12})
    assert variants["prag"].snsv == pytest.approx(1 / 24)


def test_persistence_rst_and_anr():
    result = fairness.persistence([1, None, 3, None])
    assert (result.rst, result.anr, result.n, result.revised) == (0.5, 2.0, 4, 2)
    none = fairness.persistence([None, None])
    assert none.rst == 0.0 and math.isnan(none.anr)


def _random_lists(rng: random.Random, n_items: int, k: int, vocab: int) -> list[list[str]]:
    return [rng.sample([f"v{i}" for i in range(vocab)], k) for _ in range(n_items)]


def test_fairllm_prag_and_jaccard_match_langfair():
    if os.environ.get("BENEVAUDIT_REQUIRE_LANGFAIR"):            # the langfair tier: never skip
        import langfair.metrics.recommendation as recommendation
    else:
        recommendation = pytest.importorskip(
            "langfair.metrics.recommendation",
            reason="langfair is not in this environment (make test-langfair)")
    rng = random.Random(7)
    k, names = 10, ["US", "UK", "India"]
    neutral = _random_lists(rng, 6, k, 18)
    groups = {g: _random_lists(rng, 6, k, 18) for g in names}
    ours = fairness.fairllm(groups, neutral, k)
    langfair = recommendation.RecommendationMetrics(metrics=["Jaccard", "PRAG"])
    theirs = langfair.evaluate_against_neutral(
        group_dict_list=[{str(m): groups[g][m] for m in range(6)} for g in names],
        neutral_dict={str(m): neutral[m] for m in range(6)})
    for ours_name, their_name in (("jaccard", "Jaccard"), ("prag", "PRAG")):
        assert ours[ours_name].snsr == pytest.approx(theirs[their_name]["SNSR"])
        assert ours[ours_name].snsv == pytest.approx(theirs[their_name]["SNSV"])
        assert max(ours[ours_name].per_group.values()) == pytest.approx(theirs[their_name]["max"])
