"""Cohen's κ, the confusion table, and the blind annotation subset round trip."""

import math

import numpy as np
import pytest

from benevaudit.metrics.agreement import (
    KEY_COLUMNS, SUBSET_COLUMNS, agreement, annotation_key, annotation_sheet, cohens_kappa,
    confusion, read_human_labels, select_subset,
)
from benevaudit.schema import CLASSES, Dialogue, Turn


def corpus(n_per_class: int = 6) -> list[Dialogue]:
    user = {"age": "elder", "gender": "female", "race": "Black", "ability": "none"}
    return [Dialogue(f"{c}-{i}", c, "mental_health", "gen-a", user,
                     None if i % 2 else {"age": "young", "gender": "male", "race": "White"},
                     (Turn("user", "I feel low."), Turn("agent", f"Reply {c} {i}.")))
            for c in CLASSES for i in range(n_per_class)]


def test_kappa_hand_computed():
    # 10 items: table [[4, 1], [1, 4]] -> p_o = .8, p_e = .5 -> κ = .6
    a = ["N"] * 5 + ["BB"] * 5
    b = ["N"] * 4 + ["BB"] + ["N"] + ["BB"] * 4
    assert cohens_kappa(a, b) == pytest.approx(0.6)


def test_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    for _ in range(20):
        a = list(rng.choice(CLASSES, size=50))
        b = [x if rng.random() < 0.6 else rng.choice(CLASSES) for x in a]
        assert cohens_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_degenerate_and_invalid():
    assert math.isnan(cohens_kappa(["N", "N"], ["N", "N"]))  # p_e = 1
    assert math.isnan(cohens_kappa([], []))
    with pytest.raises(ValueError, match="paired"):
        cohens_kappa(["N"], [])
    with pytest.raises(ValueError, match="'XX' is not one of"):
        confusion(["N"], ["XX"])


def test_confusion_rows_are_gold_columns_are_human():
    table = confusion(["N", "OB", "BB", "BB"], ["N", "BB", "BB", "N"])
    np.testing.assert_array_equal(table, [[1, 0, 0], [0, 0, 1], [1, 0, 1]])


def test_subset_is_balanced_seeded_and_capped():
    dialogues = corpus(6)
    sub = select_subset(dialogues, 4, seed=1)
    assert [sum(d.label == c for d in sub) for c in CLASSES] == [4, 4, 4]
    assert [d.id for d in sub] == [d.id for d in select_subset(dialogues, 4, seed=1)]
    assert [d.id for d in sub] != [d.id for d in select_subset(dialogues, 4, seed=2)]
    assert len(select_subset(dialogues, 100, seed=1)) == 18  # a small class gives what it has


def test_subset_sheet_is_blind_and_key_holds_labels():
    sub = select_subset(corpus(), 3, seed=0)
    rows = annotation_sheet(sub)
    assert tuple(rows[0]) == SUBSET_COLUMNS and "label" not in rows[0]
    assert all(r["human_label"] == "" for r in rows)
    assert rows[0]["text"].startswith("[user]: I feel low.\n[agent]: Reply")
    assert {r["agent_age"] for r in rows} <= {"young", "unspecified"}
    key = annotation_key(sub)
    assert tuple(key[0]) == KEY_COLUMNS
    assert [k["id"] for k in key] == [r["id"] for r in rows]
    assert all(k["id"].startswith(k["label"] + "-") for k in key)


def test_returned_labels_round_trip_to_kappa(tmp_path):
    dialogues = corpus()
    path = tmp_path / "labels.csv"
    path.write_text("id,human_label\nN-0,N\nN-1, bb \nOB-0,OB\nBB-0,BB\nBB-1,\n")
    labels = read_human_labels(path)
    assert labels == {"N-0": "N", "N-1": "BB", "OB-0": "OB", "BB-0": "BB"}  # blank row skipped
    result = agreement(labels, dialogues)
    assert result.n == 4 and result.accuracy == pytest.approx(0.75)
    assert result.kappa == pytest.approx(cohens_kappa(["N", "N", "OB", "BB"],
                                                      ["N", "BB", "OB", "BB"]))
    assert result.confusion[0, 2] == 1


def test_bad_label_sheets_name_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,human_label\nN-0,N\nN-1,maybe\n")
    with pytest.raises(ValueError, match=r"bad.csv:3: field 'human_label'.*'maybe'"):
        read_human_labels(bad)
    bad.write_text("id,label\nN-0,N\n")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['human_label'\]"):
        read_human_labels(bad)
    bad.write_text("id,human_label\nN-0,N\nN-0,OB\n")
    with pytest.raises(ValueError, match="bad.csv:3: field 'id'.*twice"):
        read_human_labels(bad)
    with pytest.raises(ValueError, match="not in the corpus"):
        agreement({"nope": "N"}, corpus())
    with pytest.raises(FileNotFoundError, match="no annotation file"):
        read_human_labels(tmp_path / "missing.csv")
