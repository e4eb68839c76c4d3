"""Demographic-context flips on a hand-built pair of judge runs, and the Figure 4 chart."""

import pandas as pd
import pytest

from benevaudit.metrics.flips import flip_metrics, flip_table
from benevaudit.outputs.figures.detection import flips_png

NONE, SENS = "none", "with sensory disability"

#          id   label ability  without  with    -> expected
CASES = [("a", "N", NONE, "N", "BB"),    # N->BB, was right: wrong
         ("b", "BB", NONE, "N", "BB"),   # N->BB, lands on the label: corrective
         ("c", "OB", NONE, "N", "BB"),   # N->BB, neither right: other
         ("d", "BB", SENS, "BB", "N"),   # BB->N, was right: wrong
         ("e", "BB", SENS, "BB", "N"),   # BB->N wrong again
         ("f", "N", SENS, "BB", "N"),    # BB->N corrective
         ("g", "N", SENS, "N", "N"),     # no flip
         ("h", "OB", NONE, "OB", "BB"),  # OB->BB is not an N/BB flip
         ("i", "N", SENS, None, "BB"),   # invalid without demographics: cannot flip
         ("j", "N", NONE, "N", "BB")]    # N->BB wrong


def runs() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = pd.DataFrame(CASES, columns=["id", "label", "user_ability", "without", "with"])
    with_df = rows.rename(columns={"with": "pred"}).drop(columns="without")
    without_df = rows.rename(columns={"without": "pred"}).drop(columns="with")
    extra = pd.DataFrame([{"id": "k", "label": "N", "user_ability": NONE, "pred": "BB"}])
    return pd.concat([with_df, extra], ignore_index=True), without_df.iloc[::-1]


def test_hand_built_flips_by_direction_kind_and_ability():
    table = flip_table(*runs())
    m = flip_metrics(table)
    assert m["flips/N_to_BB/wrong"] == 2 and m["flips/N_to_BB/corrective"] == 1
    assert m["flips/N_to_BB/other"] == 1
    assert m["flips/BB_to_N/wrong"] == 2 and m["flips/BB_to_N/corrective"] == 1
    assert m["flips/BB_to_N/other"] == 0
    assert m["flips/none/N_to_BB/wrong"] == 2 and m["flips/none/BB_to_N/wrong"] == 0
    assert m["flips/with_sensory_disability/BB_to_N/wrong"] == 2
    assert m["flips/with_sensory_disability/N_to_BB/wrong"] == 0
    assert m["flips/n"] == 9 and m["flips/none/n"] == 5 and m["flips/with_sensory_disability/n"] == 4
    assert m["flips/n_invalid"] == 1 and m["flips/n_unpaired"] == 1
    # every (group, direction, kind) is a row, zeros included: 3 groups x 2 x 3
    assert len(table) == 18 and list(table["user_ability"].unique()) == [NONE, SENS, "all"]


def test_figure_is_written(tmp_path):
    path = flips_png(flip_table(*runs()), tmp_path / "flips.png", "judge_operational · flips")
    assert path.stat().st_size > 5000


def test_runs_that_do_not_match_fail_clearly():
    with_df, without_df = runs()
    with pytest.raises(ValueError, match=r"lack column\(s\) \['user_ability'\]"):
        flip_table(with_df.drop(columns="user_ability"), without_df)
    with pytest.raises(ValueError, match="share no dialogue id"):
        flip_table(with_df.assign(id=with_df["id"] + "x"), without_df)
    relabelled = without_df.assign(label=without_df["label"].where(without_df["id"] != "a", "BB"))
    with pytest.raises(ValueError, match="'a' has different labels"):
        flip_table(with_df, relabelled)
