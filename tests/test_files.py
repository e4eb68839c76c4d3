"""The per-format readers of benevaudit.files, on the cases the entrypoint matrix does not reach
(tests/test_bad_inputs.py runs every path option through them)."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from benevaudit.errors import InputError
from benevaudit.files import (
    describe_columns, read_csv, read_json, read_parquet, read_text, read_yaml,
)
from benevaudit.llm.cache_files import check_sqlite


def test_text_names_the_line_of_a_nul_byte_and_of_a_bad_byte(tmp_path) -> None:
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"one\ntwo\nthr\x00ee\n")
    with pytest.raises(InputError, match=r"nul.txt:line 3: binary data \(a NUL byte\)"):
        read_text(nul, "probe.dan_template")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"one\ncaf\xe9\n")
    with pytest.raises(InputError, match=r"probe.dan_template=.*latin.txt:line 2: not UTF-8 "
                                         r"text \(byte 7\)"):
        read_text(latin, "probe.dan_template")
    blank = tmp_path / "blank.txt"
    blank.write_text(" \n\t\n")
    with pytest.raises(InputError, match="blank.txt: the file holds only blank space"):
        read_text(blank)
    with pytest.raises(InputError, match="a directory, not a file"):
        read_text(tmp_path)


def test_json_and_yaml_errors_give_the_line(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(InputError, match=r"bad.json:line 4: not valid JSON"):
        read_json(bad)
    yml = tmp_path / "config.yaml"
    yml.write_text("seed: 1\nmodel: [a, b\n")
    with pytest.raises(InputError, match=r"config.yaml:line \d: not valid YAML"):
        read_yaml(yml)
    yml.write_text("seed: 1\nmodel: {max_length: 64}\n")
    assert read_yaml(yml) == {"seed": 1, "model": {"max_length": 64}}


def test_csv_needs_its_columns_and_a_row(tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("id,human_label\n")
    with pytest.raises(InputError, match="sheet.csv: a header but no rows"):
        read_csv(sheet, "annotation.labels_path", ("id", "human_label"), "labels")
    sheet.write_text('id,human_label\n"a,N\n')
    with pytest.raises(InputError, match="sheet.csv: not a readable CSV"):
        read_csv(sheet, None, ("id",), "labels")
    sheet.write_text("id,human_label\na,N\n")
    frame = read_csv(sheet, None, ("id", "human_label"), "labels", dtype=str)
    assert frame.to_dict("records") == [{"id": "a", "human_label": "N"}]


def test_a_header_is_shown_only_when_it_looks_like_one() -> None:
    assert describe_columns(["id", "human_label"]) == "found ['id', 'human_label']"
    assert describe_columns(["You poor thing", " let me"]) == (
        "found 2 column(s) that do not look like a header")


def test_parquet_cut_short_and_a_good_one(tmp_path) -> None:
    good = tmp_path / "good.parquet"
    pd.DataFrame({"id": ["a"], "label": ["N"]}).to_parquet(good, index=False)
    assert list(read_parquet(good, None, "predictions", ("id", "label"))["id"]) == ["a"]
    with pytest.raises(InputError, match=r"good.parquet: missing column\(s\) \['pred'\]"):
        read_parquet(good, None, "predictions", ("id", "pred"))
    torn = tmp_path / "torn.parquet"
    torn.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(InputError, match="torn.parquet: not a Parquet file"):
        read_parquet(torn, "predictions.path", "predictions")


def test_request_cache_is_sqlite_or_absent_or_empty(tmp_path) -> None:
    check_sqlite(tmp_path / "absent.sqlite", "llm_cache")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    check_sqlite(tmp_path / "empty.sqlite", "llm_cache")
    with sqlite3.connect(tmp_path / "real.sqlite") as db:
        db.execute("create table t (x)")
    check_sqlite(tmp_path / "real.sqlite", "llm_cache")
    (tmp_path / "notes.sqlite").write_text("notes")
    with pytest.raises(InputError, match="llm_cache=.*notes.sqlite: not a SQLite database"):
        check_sqlite(tmp_path / "notes.sqlite", "llm_cache")
