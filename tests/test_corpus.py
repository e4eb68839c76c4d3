"""The record contract: every bad-input case stops with a message naming file, line/row, field."""

import gzip
import json
from pathlib import Path

import pytest

from benevaudit.corpus import CorpusError, read_corpus, write_jsonl, write_parquet
from benevaudit.schema import Dialogue, Turn

SECRET = "my private sentence 12345"


def record(i: int = 0, **over) -> dict:
    r = {"id": f"d{i}", "label": "BB", "role": "mental_health", "generator": "g",
         "user": {"age": "elder", "gender": "female", "race": "Black", "ability": "none"},
         "agent": None,
         "turns": [{"speaker": "user", "text": SECRET}, {"speaker": "agent", "text": "Sure."}]}
    r.update(over)
    return r


def write_lines(tmp_path: Path, lines: list, name: str = "c.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return p


def error(path: Path) -> str:
    with pytest.raises(CorpusError) as e:
        read_corpus(path)
    msg = str(e.value)
    assert SECRET not in msg and "\n" not in msg
    return msg


CASES = [
    ("malformed", ['{"id": "d0", '], "line 1: malformed JSON"),
    ("non_object", [record(0), "[1, 2]"], "line 2: expected a JSON object"),
    ("missing", [{k: v for k, v in record().items() if k != "role"}], "line 1: field 'role': missing"),
    ("wrong_type", [record(user={"age": 3, "gender": "f", "race": "r", "ability": "a"})],
     "field 'user.age': expected a non-empty string, got int"),
    ("empty_value", [record(generator="  ")], "field 'generator': expected a non-empty string"),
    ("label", [record(label="XB")], "field 'label': expected one of ['N', 'OB', 'BB'] or null, got 'XB'"),
    ("empty_turns", [record(turns=[])], "field 'turns': expected at least one turn"),
    ("empty_text", [record(turns=[{"speaker": "agent", "text": ""}])], "field 'turns[0].text'"),
    ("nonstr_text", [record(turns=[{"speaker": "agent", "text": 5}])], "field 'turns[0].text': expected a non-empty string, got int"),
    ("speaker", [record(turns=[{"speaker": "bot", "text": "hi"}])], "field 'turns[0].speaker': expected one of ['user', 'agent'], got 'bot'"),
    ("duplicate", [record(0), record(1), record(0)], "line 3: field 'id': duplicate id, first seen at"),
    ("agent_fields", [record(agent={"age": "young", "gender": "male"})], "field 'agent.race': missing"),
]


@pytest.mark.parametrize("name,lines,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_jsonl_names_file_line_and_field(tmp_path, name, lines, expected):
    msg = error(write_lines(tmp_path, lines))
    assert str(tmp_path / "c.jsonl") in msg and expected in msg


def test_non_utf8_and_empty_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(json.dumps(record()).encode() + b"\n" + b'{"id": "\xff\xfe"}\n')
    assert "line 2: not valid UTF-8" in error(p)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "empty file" in error(empty)


def test_unknown_format_and_missing_path(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n")
    assert "unsupported corpus format" in error(tmp_path / "x.csv")
    assert "no such file" in error(tmp_path / "nope.jsonl")


def test_parquet_errors_name_the_row(tmp_path):
    good = [Dialogue(f"d{i}", "N", "r", "g", record()["user"], None, (Turn("agent", "hi"),))
            for i in range(3)]
    p = write_parquet(good + [good[1]], tmp_path / "c.parquet")
    assert f"{p}:row 3: field 'id': duplicate id" in error(p)


def test_round_trip_all_formats_and_shards(tmp_path):
    ds = [Dialogue(f"d{i}", ["N", "OB", None][i % 3], "health_lifestyle", "g",
                   record()["user"], {"age": "young", "gender": "male", "race": "Latino"},
                   (Turn("user", "hi"), Turn("agent", "x")), meta={"k": i}) for i in range(6)]
    for name in ("a.jsonl", "a.jsonl.gz", "a.parquet"):
        path = write_parquet(ds, tmp_path / name) if name.endswith("parquet") else write_jsonl(ds, tmp_path / name)
        assert read_corpus(path) == ds
    shards = tmp_path / "shards"
    write_jsonl(ds[:3], shards / "shard-0.jsonl")
    write_parquet(ds[3:], shards / "shard-1.parquet")
    assert read_corpus(shards) == ds
    with gzip.open(tmp_path / "a.jsonl.gz", "rt") as f:
        assert len(f.readlines()) == 6


def test_duplicate_ids_across_shards(tmp_path):
    d = Dialogue("same", "N", "r", "g", record()["user"], None, (Turn("agent", "x"),))
    write_jsonl([d], tmp_path / "s" / "a.jsonl")
    write_jsonl([d], tmp_path / "s" / "b.jsonl")
    msg = error(tmp_path / "s")
    assert "b.jsonl:line 1: field 'id': duplicate id" in msg and "a.jsonl:line 1" in msg
