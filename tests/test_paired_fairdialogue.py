"""Paired comparison of two FairDialogue runs: GUS and SNSR with items swapped whole, against
scipy's paired permutation test and hand-computed cases; yes-rates by McNemar; and
``report.py runs=[A,B] paired=true`` end to end."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_fixtures import write_run
from scipy.stats import permutation_test
from test_paired import report

from benevaudit.metrics.paired import mcnemar
from benevaudit.report.paired import compare

GROUPS = ("male", "female", "young")


def decisions(path: Path, answers: dict[tuple[str, str], str]) -> Path:
    """A decision run: ``{(item, group): yes | no | None}`` for task award, attribute gender;
    a neutral rendering is added and must be left out."""
    rows = [{"task": "award", "attribute": "gender", "item": item, "group": group,
             "answer": "", "decision": value} for (item, group), value in answers.items()]
    rows += [{"task": "award", "attribute": "gender", "item": "i0", "group": "neutral",
              "answer": "", "decision": "no"}]
    return write_run(path, "probe", {"probe": "fairdialogue_decision"}, {}, {},
                     tables={"responses.parquet": pd.DataFrame(rows)})


def eq1(table: np.ndarray) -> float:
    """GUS by eq. 1 from [items, groups] 0/1 decisions, computed from its definition."""
    n, g = table.shape
    gamma = [sum(abs(table[i, r] - table[i, s]) for i in range(n) for s in range(g))
             / (n * (g - 1)) for r in range(g)]
    return max(gamma)


def test_gus_and_yes_rates_of_a_planted_change(tmp_path):
    items = [f"i{n}" for n in range(8)]
    a = decisions(tmp_path / "A", {(i, g): "yes" for i in items for g in GROUPS[:2]})
    b = decisions(tmp_path / "B", {(i, g): "no" if g == "female" and n < 6 else "yes"
                                   for n, i in enumerate(items) for g in GROUPS[:2]})
    table = compare(a, b, ("A", "B"), n_resamples=10_000).table.set_index("metric")
    gus = table.loc["fairness/award/gender/gus"]
    assert (gus.a, gus.b, gus.n_items, gus.discordant) == (0.0, 0.75, 8, 6)
    assert gus.p_value == pytest.approx(2 / 2 ** 6)            # all six on one side, exact
    assert table.loc["fairness/award/gender/released/gus", "b"] == pytest.approx(0.75)
    female = table.loc["fairness/award/gender/yes_rate/female"]
    assert (female.a, female.b, female.discordant) == (1.0, 0.25, 6)
    assert female.p_value == pytest.approx(mcnemar(6, 0))
    assert not female.worse and bool(gus.worse)


def test_gus_p_value_matches_scipys_paired_permutation(tmp_path):
    rng = np.random.default_rng(3)
    n = 9
    da, db = rng.integers(0, 2, (n, 3)), rng.integers(0, 2, (n, 3))
    da[4, 1] = -1                                       # one invalid answer: the item is out
    value = {1: "yes", 0: "no", -1: None}
    a = decisions(tmp_path / "A", {(f"i{i}", g): value[da[i, j]] for i in range(n)
                                   for j, g in enumerate(GROUPS)})
    b = decisions(tmp_path / "B", {(f"i{i}", g): value[db[i, j]] for i in range(n)
                                   for j, g in enumerate(GROUPS)})
    got = compare(a, b, ("A", "B"), n_resamples=10_000).table.set_index("metric")
    keep = [i for i in range(n) if i != 4]
    both = np.concatenate([da[keep], db[keep]])             # rows 0..7: A's, 8..15: B's

    def difference(x: np.ndarray, y: np.ndarray) -> float:
        return eq1(both[y]) - eq1(both[x])

    expected = permutation_test((np.arange(8), np.arange(8) + 8), difference,
                                permutation_type="samples", n_resamples=np.inf,
                                alternative="two-sided").pvalue
    row = got.loc["fairness/award/gender/gus"]
    assert (row.a, row.b) == pytest.approx((eq1(da[keep]), eq1(db[keep])))
    assert row.p_value == pytest.approx(min(1.0, expected))


def recommendations(path: Path, lists: dict[tuple[str, str], list[str]]) -> Path:
    rows = [{"task": "course", "attribute": "gender", "item": item, "group": group,
             "answer": "", "ranked": ranked} for (item, group), ranked in lists.items()]
    return write_run(path, "probe", {"probe": "fairdialogue_recommendation"}, {}, {},
                     tables={"responses.parquet": pd.DataFrame(rows)})


def test_released_snsr_of_recommendation_runs(tmp_path):
    same = ["a", "b", "c"]
    a = recommendations(tmp_path / "A", {(f"i{n}", g): same for n in range(4)
                                         for g in GROUPS[:2]})
    b = recommendations(tmp_path / "B", {(f"i{n}", g): same if g == "male" else ["x", "y", "z"]
                                         for n in range(4) for g in GROUPS[:2]})
    table = compare(a, b, ("A", "B")).table.set_index("metric")
    for similarity in ("prag", "serp"):
        row = table.loc[f"fairness/course/gender/released/{similarity}/snsr"]
        assert row.a == pytest.approx(0.0) and row.b == pytest.approx(1.0)   # no overlap: 1
        assert row.discordant == 4 and row.p_value == pytest.approx(2 / 2 ** 4)


def test_report_pairs_fairdialogue_runs_and_refuses_mixed_kinds(tmp_path):
    from benevaudit.errors import BenevauditError

    items = [f"i{n}" for n in range(12)]
    a = decisions(tmp_path / "A", {(i, g): "yes" for i in items for g in GROUPS[:2]})
    b = decisions(tmp_path / "B", {(i, g): "no" if g == "female" else "yes"
                                   for i in items for g in GROUPS[:2]})
    files = report(tmp_path, a, b, "gate.direction=worse")
    paired = pd.read_csv(tmp_path / "rep" / "paired.csv").set_index("metric")
    assert paired.loc["fairness/award/gender/gus", "significant"]
    assert any("fairness/award/gender/gus worse" in line for line in files.gate)
    assert not any("yes_rate" in line for line in files.gate)     # never "worse"
    flips = pd.read_csv(tmp_path / "rep" / "paired_flips.csv")
    assert len(flips) == 12 and set(flips["group"]) == {"female"}
    rec = recommendations(tmp_path / "R", {(i, g): ["a"] for i in items for g in GROUPS[:2]})
    with pytest.raises(BenevauditError, match="both decision or both recommendation"):
        compare(a, rec, ("A", "R"))


def test_pairs_of_groups_are_unordered_in_the_released_gus(tmp_path):
    """Three groups, one item: the released GUS is the mean |Δ| over the three pairs."""
    a = decisions(tmp_path / "A", {("i0", g): "yes" for g in GROUPS})
    b = decisions(tmp_path / "B", {("i0", "male"): "yes", ("i0", "female"): "no",
                                   ("i0", "young"): "no"})
    row = compare(a, b, ("A", "B")).table.set_index("metric").loc[
        "fairness/award/gender/released/gus"]
    deltas = [abs(x - y) for x, y in combinations([1, 0, 0], 2)]
    assert row.b == pytest.approx(sum(deltas) / len(deltas))


def test_heard_vs_stated_snsr_p_value_matches_scipy(tmp_path):
    """Eq. 3's SNSR (max − min PRAG* over ordered pairs), items swapped whole, against scipy's
    paired permutation test of the same statistic computed by the probe's own metric."""
    from benevaudit.metrics import fairness
    from benevaudit.report.paired import align, read_side
    from benevaudit.report.paired_fairdialogue import heard_vs_stated

    rng = np.random.default_rng(7)
    pool = list("abcdefgh")
    n = 7

    def lists() -> dict[tuple[str, str], list[str]]:
        return {(f"i{i}", g): list(rng.permutation(pool)[:4]) for i in range(n)
                for g in GROUPS[:2]}

    la, lb = lists(), lists()
    a, b = recommendations(tmp_path / "A", la), recommendations(tmp_path / "B", lb)
    merged, _, _ = align(read_side(a), read_side(b), ("A", "B"))
    got = heard_vs_stated(merged, 10_000, 0)["fairness/course/gender/snsr"]
    both = [la, lb]

    def snsr_of(picks: np.ndarray) -> float:          # picks[i]: which run item i comes from
        groups = {g: [both[p][(f"i{i}", g)] for i, p in enumerate(picks)] for g in GROUPS[:2]}
        return fairness.snsr(list(fairness.prag_matrix(groups, 4).values()))

    expected = permutation_test(
        (np.zeros(n, int), np.ones(n, int)), lambda x, y: snsr_of(y) - snsr_of(x),
        permutation_type="samples", n_resamples=np.inf, alternative="two-sided").pvalue
    assert got == pytest.approx(min(1.0, expected))
