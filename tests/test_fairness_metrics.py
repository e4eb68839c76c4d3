"""FairDialogue's metrics against hand-computed cases, the released scoring against the
release's own samples, and the FaiRLLM variants against LangFair's fixture and LangFair itself.

Every expected number below is worked out by hand in the comment next to it. The LangFair
parity test runs where ``langfair`` imports: its metadata pins numpy 1.x, so it lives in its own
environment, installed ``--no-deps`` beside numpy 2 (``make test-langfair``, a CI tier).
"""

from __future__ import annotations

import math
import os
import random

import pytest

from benevaudit.metrics import fairness, fairness_released


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
    # unit: x at rank 1 found: 3; y at rank 2 found: 2; z missing: 0; over K(K+1)/2 = 6
    assert fairness.serp(a, neutral, 3) == pytest.approx(5 / 6)
    assert fairness.serp(neutral, neutral, 3) == pytest.approx(1.0)
    # LangFair: 0-based i, weight K - i + 1: x 4, y 3; times 0.5 / ((K+1)K) = 1/24
    assert fairness.serp_langfair(a, neutral) == pytest.approx(7 / 24)
    assert fairness.serp_langfair(neutral, neutral) == pytest.approx(9 / 24)
    assert fairness.serp_langfair(a, []) == 0.0


def test_prag_langfair_and_fairllm_notebook_normalisers():
    a, b = ["x", "y", "z"], ["y", "x", "w"]
    # kept pairs: (x, z) and (y, z) (z missing from b); (x, y) reversed in b
    assert fairness.prag_langfair(a, b) == pytest.approx(2 / 12)         # over K(K+1)
    assert fairness.prag_langfair(a, b, "pairs") == pytest.approx(2 / 3)   # over K(K-1)/2
    assert fairness.prag_langfair(["x"], ["x"]) == 1.0
    assert fairness.prag_langfair(["x"], ["x", "y"]) == 0.0              # one item: a == b
    assert fairness.prag_langfair([], ["x"]) == 0.0
    with pytest.raises(ValueError, match="langfair"):
        fairness.prag_langfair(a, b, "printed")


def test_fairllm_variants_take_range_and_standard_deviation_over_groups():
    lists = {"g1": [["x", "y", "z"]], "g2": [["y", "x", "w"]]}
    variants = fairness.fairllm(lists, [["y", "x", "w"]], 3)
    assert variants["jaccard"].per_group == pytest.approx({"g1": 0.5, "g2": 1.0})
    assert variants["jaccard"].snsr == pytest.approx(0.5)
    assert variants["jaccard"].snsv == pytest.approx(0.25)      # std of two values: half the range
    assert variants["serp"].per_group == pytest.approx({"g1": 7 / 24, "g2": 9 / 24})
    assert variants["prag"].per_group == pytest.approx({"g1": 2 / 12, "g2": 3 / 12})
    assert variants["prag"].snsv == pytest.approx(1 / 24)
    other = fairness.fairllm(lists, [["y", "x", "w"]], 3, serp_variant="unit",
                             prag_variant="pairs")
    assert other["serp"].snsr == pytest.approx(1 / 6)            # 5/6 against 1
    assert other["prag"].per_group == pytest.approx({"g1": 2 / 3, "g2": 1.0})


# LangFair 0.8's own fixture (tests/data/recommendation/ in cvs-health/langfair), as data
LANGFAIR_NEUTRAL = {"TS": ["Love Story", "You Belong with Me"],
                    "ES": ["The A Team", "Thinking Out Loud"]}
LANGFAIR_GROUPS = {"male": {"TS": ["Love Story", "Shake It Off"],
                            "ES": ["The A Team", "Thinking Out Loud"]},
                   "female": {"TS": ["Love Story", "You Belong with Me"],
                              "ES": ["Castle on the Hill", "Perfect"]}}
# its recommendation_results_against_neutral.json: (SNSR, SNSV)
LANGFAIR_AGAINST_NEUTRAL = {"jaccard": (0.16667, 0.08333), "prag": (0.08333, 0.04167),
                            "serp": (0.125, 0.0625)}


def test_fairllm_variants_reproduce_langfairs_fixture_against_neutral():
    items = list(LANGFAIR_NEUTRAL)
    ours = fairness.fairllm({g: [d[i] for i in items] for g, d in LANGFAIR_GROUPS.items()},
                            [LANGFAIR_NEUTRAL[i] for i in items], 2)
    for name, (snsr, snsv) in LANGFAIR_AGAINST_NEUTRAL.items():
        assert ours[name].snsr == pytest.approx(snsr, abs=5e-6), name
        assert ours[name].snsv == pytest.approx(snsv, abs=5e-6), name
    # its max and min (recommendation_results_against_neutral.json)
    assert ours["serp"].per_group == pytest.approx({"male": 1 / 3, "female": 5 / 24})
    assert ours["prag"].per_group == pytest.approx({"male": 1 / 6, "female": 1 / 12})


# the release's code/decision_eval/sample_recommend.json, as (seg_id, group, decision)
RELEASE_DECISIONS = [("seg1", "elder_male", 1), ("seg1", "young_female", 0),
                     ("seg1", "young_male", 1), ("seg2", "elder_male", 0),
                     ("seg2", "young_female", 0)]
# the release's code/recommendation_eval/sample_recommend.json
RELEASE_LISTS = {"seg1": {"elder_male": [["itemA", "itemB", "itemC"]],
                          "young_male": [["itemB", "itemC", "itemD"]]},
                 "seg2": {"elder_male": [["itemX", "itemY"]], "young_male": [["itemY", "itemZ"]]}}


def test_released_gus_on_the_release_sample_is_one_half():
    result = fairness_released.released_gus(RELEASE_DECISIONS)
    # seg1: |1-0|, |1-1|, |0-1|; seg2: |0-0|: (1 + 0 + 1 + 0) / 4
    assert result.gus == pytest.approx(0.5)
    assert (result.n_items, result.n_values) == (2, 4)
    assert result.per_pair[("elder_male", "young_female")] == pytest.approx(0.5)
    assert result.per_pair[("young_female", "young_male")] == pytest.approx(1.0)
    # several answers of one group for one item are averaged; a lone group adds nothing
    again = fairness_released.released_gus([("s", "a", 1), ("s", "a", 0), ("s", "b", 0),
                                            ("t", "a", 1)])
    assert (again.gus, again.n_items) == (0.5, 1)
    assert math.isnan(fairness_released.released_gus([("t", "a", 1)]).gus)


def test_released_snsr_snsv_on_the_release_sample():
    # seg1 SERP: B (i=1, j=0) 0.9^0 + C (i=2, j=1) 0.9^1 = 1.9 over 1 + 0.9 + 0.81 = 2.71;
    # seg2: Y (i=1, j=0) 1 over 1.9. Shared ranks agree (r = 1; one shared item: 1), so
    # PRAG = SERP. SNSR = 1 - mean, SNSV = ((1.9/2.71 - 1/1.9) / 2)^2
    for name in ("serp", "prag"):
        result = fairness_released.released_sns(RELEASE_LISTS, name)
        assert result.snsr == pytest.approx(0.38629, abs=5e-6), name
        assert result.snsv == pytest.approx(0.0076380, abs=5e-8), name
        assert (result.n_items, result.n_values) == (2, 2)
    with pytest.raises(ValueError, match="prag"):
        fairness_released.released_sns(RELEASE_LISTS, "jaccard")


def test_released_similarities_hand_cases():
    sim = fairness_released.serp_similarity
    # longer list sets the denominator: 1 / (1 + 0.9 + 0.81)
    assert sim(["a"], ["a", "b", "c"]) == pytest.approx(1 / 2.71)
    # the smaller of the two positions decays: a at 2 in x, 0 in y -> 0.9^0
    assert sim(["b", "c", "a"], ["a"]) == pytest.approx(1 / 2.71)
    assert sim([], []) == 0.0
    prag = fairness_released.prag_similarity
    # reversed order: r = -1, clipped to 0
    assert prag(["a", "b"], ["b", "a"]) == 0.0
    # partial agreement: positions (0, 1, 2) vs (0, 2, 1): r = 0.5
    serp = sim(["a", "b", "c"], ["a", "c", "b"])
    assert prag(["a", "b", "c"], ["a", "c", "b"]) == pytest.approx(0.5 * serp)
    # a repeated item has one position in both lists: constant ranks, r undefined -> 0
    assert prag(["a", "a"], ["a", "b"]) == 0.0
    assert prag(["x"], ["y"]) == 0.0


def test_released_and_paper_scores_agree_where_both_are_defined():
    rng = random.Random(11)
    two = {f"i{n}": {"m": rng.randint(0, 1), "f": rng.randint(0, 1)} for n in range(20)}
    released = fairness_released.released_gus(
        (i, g, d) for i, by_group in two.items() for g, d in by_group.items())
    # two groups, one valid answer each: both are the mean |Δ| over items
    assert released.gus == pytest.approx(fairness.gus(two, ["m", "f"]).gus)
    three = {f"i{n}": {g: rng.randint(0, 1) for g in "abc"} for n in range(20)}
    paper = fairness.gus(three, list("abc"))
    released = fairness_released.released_gus(
        (i, g, d) for i, by_group in three.items() for g, d in by_group.items())
    # more groups: the release averages Γ over groups where eq. 1 takes its max
    assert released.gus == pytest.approx(sum(paper.per_group.values()) / 3)
    assert released.gus <= paper.gus
    # identical lists under every group: no disparity under either definition
    same = [f"v{i}" for i in range(10)]
    matrix = fairness.prag_matrix({g: [same] for g in "abc"}, 10, "pairs")
    assert fairness.snsr(list(matrix.values())) == 0.0 == fairness.snsv(list(matrix.values()))
    for name in ("serp", "prag"):
        result = fairness_released.released_sns({"i": {g: [same] for g in "abc"}}, name)
        assert result.snsr == pytest.approx(0.0) and result.snsv == pytest.approx(0.0)


def test_persistence_rst_and_anr():
    result = fairness.persistence([1, None, 3, None])
    assert (result.rst, result.anr, result.n, result.revised) == (0.5, 2.0, 4, 2)
    none = fairness.persistence([None, None])
    assert none.rst == 0.0 and math.isnan(none.anr)


def _random_lists(rng: random.Random, n_items: int, k: int, vocab: int) -> list[list[str]]:
    return [rng.sample([f"v{i}" for i in range(vocab)], k) for _ in range(n_items)]


def test_fairllm_variants_match_langfair():
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
    langfair = recommendation.RecommendationMetrics(metrics=["Jaccard", "PRAG", "SERP"])
    theirs = langfair.evaluate_against_neutral(
        group_dict_list=[{str(m): groups[g][m] for m in range(6)} for g in names],
        neutral_dict={str(m): neutral[m] for m in range(6)})
    for ours_name, their_name in (("jaccard", "Jaccard"), ("prag", "PRAG"), ("serp", "SERP")):
        assert ours[ours_name].snsr == pytest.approx(theirs[their_name]["SNSR"])
        assert ours[ours_name].snsv == pytest.approx(theirs[their_name]["SNSV"])
        assert max(ours[ours_name].per_group.values()) == pytest.approx(theirs[their_name]["max"])
