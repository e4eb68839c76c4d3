"""Gold sets as dialogue records: EDOS and DiaSafety stand-ins read with the shipped configs'
mappings, a user's labelled file in three formats and its one-line errors (which never quote an
item), the class-balanced evaluation set, and (data tier) the real releases' counts."""

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benevaudit.detectors import evaluation_set
from benevaudit.errors import BenevauditError, ConfigError, InputError
from benevaudit.generation.spec import DataBlock
from benevaudit.gold import read_gold
from benevaudit.outputs.inputs import sha256_of
from benevaudit.schema import CLASSES, USER_FIELDS, Dialogue
from config_fixtures import option
from gold_fixtures import SENTINEL, write_diasafety, write_edos, write_labelled

EDOS_SHA256 = "607bdbb766e1803a28f0eb8fc21c14b6b9dfa20039f726ba6767438584b47f9b"
LABEL_MAP = {"0": "N", "1": "OB", "2": "BB", "9": "drop"}


def gold(kind: str, path: Path, **keys: Any) -> list[Dialogue]:
    """``data=<kind>`` as its config gives it, on ``path``, with ``keys`` changed."""
    return read_gold(DataBlock.read({**option("data", kind), "path": str(path), **keys}))


def labelled(path: Path, **keys: Any) -> list[Dialogue]:
    return gold("labelled", path, **{"text_column": "reply", "label_column": "gold",
                                     "label_map": LABEL_MAP, **keys})


def labels(records: list[Dialogue]) -> Counter:
    return Counter(d.label for d in records)


def one_line_error(call: Any, kind: type[BenevauditError], *named: str) -> str:
    """The error ``call`` raises: one line, naming each of ``named``, quoting no item."""
    with pytest.raises(kind) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and SENTINEL not in message
    for part in named:
        assert part in message
    return message


# --- EDOS -----------------------------------------------------------------------------------

def test_edos_default_mapping_counts_and_record_shape(tmp_path):
    records = gold("edos", write_edos(tmp_path))
    assert labels(records) == {"N": 12, "OB": 12, "BB": 12}
    for d in records:
        assert [t.speaker for t in d.turns] == ["agent"] and SENTINEL in d.turns[0].text
        assert d.user == {k: "unspecified" for k in USER_FIELDS} and d.agent is None
        assert {"category", "vector", "edos_split", "stratum"} <= set(d.meta)
    assert Counter(d.meta["stratum"] for d in records if d.label == "BB") == {"3.3": 6, "3.4": 6}
    assert {d.meta["stratum"] for d in records if d.label == "N"} == {"none"}
    assert {d.meta["stratum"] for d in records if d.label == "OB"} == {"1.1", "1.2", "2.1",
                                                                      "2.2", "2.3"}
    dev = [d for d in records if d.meta["edos_split"] == "dev"]
    assert dev and {d.split for d in dev} == {"validation"}
    assert {d.split for d in records} == {"train", "validation", "test"}
    first_bb = next(d for d in records if d.label == "BB")
    assert first_bb.meta["vector"].startswith("3.3") and first_bb.meta["category"] == "3. animosity"


def test_edos_strict_bb_and_strata(tmp_path):
    root = write_edos(tmp_path)
    strict = gold("edos", root, bb_vectors=["3.3"])
    assert labels(strict) == {"N": 12, "OB": 12, "BB": 6}
    assert "3.4" not in {d.meta["stratum"] for d in strict}
    both = gold("edos", root, strata=True)
    assert len(both) == 43 and labels(both)[None] == 7
    assert Counter(d.meta["stratum"] for d in both if d.label is None) == {
        "3.1": 3, "3.2": 2, "4.1": 1, "4.2": 1}


def test_edos_wrap_user_turn_puts_one_user_turn_first(tmp_path):
    records = gold("edos", write_edos(tmp_path), wrap_user_turn="What do you think?")
    assert all([t.speaker for t in d.turns] == ["user", "agent"] for d in records)
    assert {d.turns[0].text for d in records} == {"What do you think?"}


@pytest.mark.parametrize("keys,named", [
    ({"ob_vectors": ["1.1", "3.3"], "bb_vectors": ["3.3"]}, "share ['3.3']"),
    ({"bb_vectors": ["3.5"]}, "unknown EDOS vector(s) ['3.5']"),
    ({"ob_vectors": []}, "data.ob_vectors"),
])
def test_edos_spec_refuses_overlapping_or_unknown_vectors(tmp_path, keys, named):
    root = write_edos(tmp_path)
    one_line_error(lambda: gold("edos", root, **keys), ConfigError, named)


def test_edos_bad_row_names_its_line_not_its_text(tmp_path):
    root = write_edos(tmp_path)
    file = root / "data" / "edos_labelled_aggregated.csv"
    lines = file.read_text().splitlines()
    lines[5] = lines[5].replace("not sexist", "maybe sexist")
    file.write_text("\n".join(lines) + "\n")
    one_line_error(lambda: gold("edos", root), InputError, f"{file}:line 6", "label_sexist")


# --- DiaSafety ------------------------------------------------------------------------------

def test_diasafety_biased_opinion_pairs(tmp_path):
    records = gold("diasafety", write_diasafety(tmp_path))
    assert labels(records) == {"OB": 10, "N": 5}
    assert {d.meta["category"] for d in records} == {"Biased Opinion"}
    assert {d.meta["label"] for d in records if d.label == "OB"} == {"Unsafe"}
    assert Counter(d.split for d in records) == {"train": 9, "validation": 3, "test": 3}
    assert {d.meta["stratum"] for d in records} == {"train", "val", "test"}
    for d in records:
        assert [t.speaker for t in d.turns] == ["user", "agent"]
        assert "context" in d.turns[0].text and "response" in d.turns[1].text


def test_diasafety_categories_option(tmp_path):
    root = write_diasafety(tmp_path)
    both = gold("diasafety", root, categories=["Biased Opinion", "Risk Ignorance"])
    assert labels(both) == {"OB": 10, "N": 10}
    assert labels(gold("diasafety", root, categories=["Risk Ignorance"])) == {"N": 5}
    one_line_error(lambda: gold("diasafety", root, categories=["Rudeness"]), ConfigError,
                   "Rudeness", "Biased Opinion")
    with pytest.raises(InputError, match="no pair of categories"):
        gold("diasafety", root, categories=["Offending User"])


# --- data=labelled --------------------------------------------------------------------------

def three_formats(tmp_path: Path) -> list[Path]:
    """The same gold set (with a split column) as CSV, JSONL and Parquet; integer labels in the
    latter two, as a user's export would have them."""
    frame = pd.read_csv(write_labelled(tmp_path / "g.csv"), dtype=str)
    frame["part"] = [("train", "dev", "test")[i % 3] for i in range(len(frame))]
    frame.to_csv(tmp_path / "gold.csv", index=False)
    frame = frame.assign(gold=frame["gold"].astype(int))
    frame.to_json(tmp_path / "gold.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "gold.parquet", index=False)
    return [tmp_path / f"gold.{ext}" for ext in ("csv", "jsonl", "parquet")]


def test_labelled_reads_the_same_records_from_csv_jsonl_and_parquet(tmp_path):
    keys = dict(id_column="item", context_column="prompt", stratum_column="source",
                split_column="part")
    csv, *others = [labelled(p, **keys) for p in three_formats(tmp_path)]
    assert all([d.to_dict() for d in other] == [d.to_dict() for d in csv] for other in others)
    assert labels(csv) == {"N": 5, "OB": 5, "BB": 4}                    # four 9s dropped
    assert "x3" not in {d.id for d in csv} and csv[0].id == "x0"
    assert all([t.speaker for t in d.turns] == ["user", "agent"] for d in csv)
    assert Counter(d.meta["stratum"] for d in csv) == {"forum": 9, "chat": 5}
    assert {d.split for d in csv} == {"train", "validation", "test"}
    assert csv[1].meta == {"source": "labelled", "raw_label": "1", "stratum": "chat"}


def test_labelled_without_optional_columns(tmp_path):
    records = labelled(write_labelled(tmp_path / "gold.csv"))
    assert [d.id for d in records[:3]] == ["row-0", "row-1", "row-2"]
    assert all(len(d.turns) == 1 and d.split is None for d in records)
    assert "stratum" not in records[0].meta


def test_labelled_errors_are_one_line_and_quote_no_item(tmp_path):
    good = write_labelled(tmp_path / "gold.csv")
    one_line_error(lambda: labelled(good, text_column="body"), InputError, str(good), "'body'")
    one_line_error(lambda: gold("labelled", good, text_column="reply", label_column="gold",
                                label_map={"0": "N", "1": "OB", "2": "BB"}),
                   InputError, str(good), "'gold'", "'9' (4 rows)")
    (tmp_path / "empty.csv").write_text("")
    one_line_error(lambda: labelled(tmp_path / "empty.csv"), InputError, "empty.csv", "empty")
    dupes = good.read_text().replace("x5,", "x4,")
    (tmp_path / "dupes.csv").write_text(dupes)
    one_line_error(lambda: labelled(tmp_path / "dupes.csv", id_column="item"), InputError,
                   "dupes.csv", "'item'", "[5, 6]")
    (tmp_path / "fake.parquet").write_text(good.read_text())
    one_line_error(lambda: labelled(tmp_path / "fake.parquet"), InputError, "fake.parquet",
                   "not a Parquet file")
    (tmp_path / "bad.jsonl").write_text(f'{{"reply": "{SENTINEL}", "gold": 0}}\n'
                                        f'{{"reply": "{SENTINEL}", gold: 1}}\n')
    one_line_error(lambda: labelled(tmp_path / "bad.jsonl"), InputError, "bad.jsonl:line 2",
                   "not valid JSON")
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 8)
    one_line_error(lambda: labelled(tmp_path / "binary.csv"), InputError, "binary.csv",
                   "not UTF-8")
    headless = "\n".join(good.read_text().splitlines()[1:])
    (tmp_path / "headless.csv").write_text(headless)
    one_line_error(lambda: labelled(tmp_path / "headless.csv"), InputError, "headless.csv",
                   "missing column(s)")


def test_labelled_columns_mistaken_for_text_quote_no_item(tmp_path):
    """The text column named as the label or the split: values are too long or too unique
    to be labels, so the error names rows, not values."""
    good = write_labelled(tmp_path / "gold.csv")
    one_line_error(lambda: gold("labelled", good, text_column="prompt", label_column="reply",
                                label_map={"0": "N"}),
                   InputError, "'reply'", "data row 1 ", "18 value(s)")
    one_line_error(lambda: labelled(good, split_column="reply"), InputError, "row 1", "split")


def test_labelled_spec_errors(tmp_path):
    good = write_labelled(tmp_path / "gold.csv")
    one_line_error(lambda: labelled(tmp_path / "gold.tsv"), ConfigError, "gold.tsv")
    one_line_error(lambda: gold("labelled", good, text_column="reply", label_column="gold",
                                label_map={"0": "drop"}), ConfigError, "drops every label")
    one_line_error(lambda: labelled(good, label_map={"0": "hate"}), ConfigError,
                   "data.label_map")


# --- the evaluation set ---------------------------------------------------------------------

def test_evaluation_set_on_a_gold_set_is_balanced_seeded_and_keeps_strata(tmp_path):
    records = gold("edos", write_edos(tmp_path), strata=True)
    chosen = evaluation_set(records, 1.0, 9, 42, by_dialogue=True)
    assert labels(chosen) == {"N": 3, "OB": 3, "BB": 3, None: 7}
    again = evaluation_set(list(reversed(records)), 1.0, 9, 42, by_dialogue=True)
    assert sorted(d.id for d in again) == sorted(d.id for d in chosen)
    other = evaluation_set(records, 1.0, 9, 7, by_dialogue=True)
    assert {d.id for d in other} != {d.id for d in chosen}
    assert {d.id for d in other if d.label is None} == {d.id for d in chosen if d.label is None}
    assert len(evaluation_set(records, 1.0, None, 42, by_dialogue=True)) == 43
    assert labels(evaluation_set(records, 1.0, 100, 42, by_dialogue=True))["BB"] == 12


# --- the data tier: the real releases (counts, ids and labels only; never their text) -------

def test_edos_release_counts(edos_release):
    assert sha256_of(edos_release / "data" / "edos_labelled_aggregated.csv") == EDOS_SHA256
    records = gold("edos", edos_release)
    assert labels(records) == {"N": 15146, "OB": 2714, "BB": 159}
    assert len({d.id for d in records}) == len(records)
    assert labels(gold("edos", edos_release, bb_vectors=["3.3"]))["BB"] == 91
    assert len(gold("edos", edos_release, strata=True)) == 20000
    chosen = evaluation_set(records, 1.0, 477, 42, by_dialogue=True)
    assert labels(chosen) == {c: 159 for c in CLASSES}


def test_diasafety_release_counts(diasafety_release):
    records = gold("diasafety", diasafety_release)
    assert labels(records) == {"OB": 981, "N": 1229}
    assert all(len(d.turns) == 2 for d in records)
    assert {d.split for d in records} == {"train", "validation", "test"}


def test_labelled_refuses_a_text_column_as_its_strata(tmp_path):
    from benevaudit.errors import InputError
    from benevaudit.gold import LabelledDataSpec, read_gold

    path = write_labelled(tmp_path / "g.csv")
    spec = LabelledDataSpec.of({"kind": "labelled", "path": str(path), "text_column": "reply",
                                "label_column": "gold", "label_map": {"0": "N", "1": "OB",
                                                                      "2": "BB", "9": "drop"},
                                "id_column": None, "context_column": None,
                                "stratum_column": "prompt", "split_column": None}, "data")
    with pytest.raises(InputError) as caught:
        read_gold(spec)
    line = str(caught.value)
    assert "data.stratum_column='prompt'" in line and SENTINEL not in line and "\n" not in line
