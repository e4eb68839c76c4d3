"""Reading, validating and writing dialogue corpora (the record contract in DESIGN.md).

Readers accept ``.jsonl``, ``.jsonl.gz``, ``.parquet`` and a directory of such shards. Every
record is validated before any model work; a bad record stops the read with a
:class:`CorpusError` that names the file, the line (JSONL) or row (Parquet), the field and what
was expected. Messages never quote dialogue text, which may be sensitive.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benevaudit.errors import BenevauditError
from benevaudit.schema import (
    AGENT_FIELDS, ARROW_SCHEMA, CLASSES, SPEAKERS, SPLITS, USER_FIELDS, Dialogue, Turn,
)

SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
_REQUIRED = ("id", "label", "role", "generator", "user", "agent", "turns")


class CorpusError(BenevauditError, ValueError):
    """A corpus that breaks the record contract; the message says where and what."""


def _type_name(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _nonempty_str(v: Any, where: str, field: str) -> str:
    if not isinstance(v, str):
        raise CorpusError(f"{where}: field '{field}': expected a non-empty string, "
                          f"got {_type_name(v)}")
    if not v.strip():
        raise CorpusError(f"{where}: field '{field}': expected a non-empty string, got ''")
    return v


def _demographics(v: Any, fields: tuple[str, ...], where: str, name: str) -> dict[str, str]:
    if not isinstance(v, dict):
        raise CorpusError(f"{where}: field '{name}': expected an object with keys "
                          f"{list(fields)}, got {_type_name(v)}")
    for k in fields:
        if k not in v:
            raise CorpusError(f"{where}: field '{name}.{k}': missing")
        _nonempty_str(v[k], where, f"{name}.{k}")
    return {k: v[k] for k in fields}


def _turns(v: Any, where: str) -> tuple[Turn, ...]:
    if not isinstance(v, list):
        raise CorpusError(f"{where}: field 'turns': expected a list of "
                          f"{{speaker, text}}, got {_type_name(v)}")
    if not v:
        raise CorpusError(f"{where}: field 'turns': expected at least one turn, got []")
    out = []
    for i, t in enumerate(v):
        f = f"turns[{i}]"
        if not isinstance(t, dict):
            raise CorpusError(f"{where}: field '{f}': expected an object, got {_type_name(t)}")
        if t.get("speaker") not in SPEAKERS:
            got = t["speaker"] if isinstance(t.get("speaker"), str) else _type_name(t.get("speaker"))
            raise CorpusError(f"{where}: field '{f}.speaker': expected one of "
                              f"{list(SPEAKERS)}, got {got!r}")
        out.append(Turn(t["speaker"], _nonempty_str(t.get("text"), where, f"{f}.text")))
    return tuple(out)


def validate_record(obj: Any, where: str) -> Dialogue:
    """Check one decoded record against the contract and build its :class:`Dialogue`."""
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: expected a JSON object (one dialogue), got {_type_name(obj)}")
    for k in _REQUIRED:
        if k not in obj:
            raise CorpusError(f"{where}: field '{k}': missing")
    label = obj["label"]
    if label is not None and label not in CLASSES:
        got = label if isinstance(label, str) else _type_name(label)
        raise CorpusError(f"{where}: field 'label': expected one of {list(CLASSES)} or null, "
                          f"got {got!r}")
    split = obj.get("split")
    if split is not None and split not in SPLITS:
        raise CorpusError(f"{where}: field 'split': expected one of {list(SPLITS)} or null, "
                          f"got {split if isinstance(split, str) else _type_name(split)!r}")
    meta = obj.get("meta") or {}
    if isinstance(meta, str):  # Parquet stores meta as JSON text
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            raise CorpusError(f"{where}: field 'meta': expected a JSON object") from None
    if not isinstance(meta, dict):
        raise CorpusError(f"{where}: field 'meta': expected an object, got {_type_name(meta)}")
    agent = obj["agent"]
    return Dialogue(
        id=_nonempty_str(obj["id"], where, "id"),
        label=label,
        role=_nonempty_str(obj["role"], where, "role"),
        generator=_nonempty_str(obj["generator"], where, "generator"),
        user=_demographics(obj["user"], USER_FIELDS, where, "user"),
        agent=None if agent is None else _demographics(agent, AGENT_FIELDS, where, "agent"),
        turns=_turns(obj["turns"], where),
        split=split,
        meta=meta,
    )


def _jsonl_records(path: Path) -> Iterator[tuple[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            for n, raw in enumerate(f, start=1):
                where = f"{path}:line {n}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise CorpusError(f"{where}: not valid UTF-8 (byte {e.start})") from None
                if not line.strip():
                    continue
                try:
                    yield where, json.loads(line)
                except json.JSONDecodeError as e:
                    raise CorpusError(f"{where}: malformed JSON ({e.msg} at column {e.colno})") from None
    except (gzip.BadGzipFile, EOFError) as e:
        raise CorpusError(f"{path}: not a readable gzip file ({e})") from None


def _parquet_records(path: Path) -> Iterator[tuple[str, Any]]:
    row = 0
    try:
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=8192):   # a torn page fails here, not above
            for rec in batch.to_pylist():
                yield f"{path}:row {row}", rec
                row += 1
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:   # torn, or text not UTF-8
        lines = str(e).strip().splitlines()    # pyarrow's messages run over several lines
        raise CorpusError(f"{path}: not a readable Parquet file (at row {row}: "
                          f"{lines[0] if lines else type(e).__name__})") from None


def corpus_files(path: str | Path) -> list[Path]:
    """The files a corpus path stands for: itself, or a directory's shards in name order."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(SUFFIXES))
        if not files:
            raise CorpusError(f"{path}: directory holds no corpus shards ({', '.join(SUFFIXES)})")
        return files
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    if not path.name.endswith(SUFFIXES):
        raise CorpusError(f"{path}: unsupported corpus format; expected {', '.join(SUFFIXES)} "
                          "or a directory of shards")
    return [path]


def iter_corpus(path: str | Path) -> Iterator[Dialogue]:
    """Validated dialogues of a corpus, in file order; raises on the first bad record."""
    seen: dict[str, str] = {}
    for f in corpus_files(path):
        if f.stat().st_size == 0:        # a 0-byte .parquet would read as "not Parquet"
            raise CorpusError(f"{f}: empty file (no dialogues)")
        records = _parquet_records(f) if f.suffix == ".parquet" else _jsonl_records(f)
        count = 0
        for where, obj in records:
            d = validate_record(obj, where)
            if d.id in seen:
                raise CorpusError(f"{where}: field 'id': duplicate id, first seen at {seen[d.id]}")
            seen[d.id] = where
            count += 1
            yield d
        if count == 0:
            raise CorpusError(f"{f}: empty file (no dialogues)")


def read_corpus(path: str | Path) -> list[Dialogue]:
    return list(iter_corpus(path))


def _row(d: Dialogue) -> dict[str, Any]:
    row = d.to_dict()
    row["meta"] = json.dumps(d.meta, sort_keys=True) if d.meta else None
    return row


def to_table(dialogues: Iterable[Dialogue]) -> pa.Table:
    return pa.Table.from_pylist([_row(d) for d in dialogues], schema=ARROW_SCHEMA)


def from_table(table: pa.Table) -> list[Dialogue]:
    return [validate_record(r, f"row {i}") for i, r in enumerate(table.to_pylist())]


def read_table(path: str | Path) -> pa.Table:
    return to_table(read_corpus(path))


def write_parquet(data: Sequence[Dialogue] | pa.Table, path: str | Path) -> Path:
    """Write atomically (temporary name, then rename) so a killed job leaves no torn file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = data if isinstance(data, pa.Table) else to_table(data)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
    return path


def write_jsonl(dialogues: Iterable[Dialogue], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.name.endswith(".gz") else open
    tmp = path.with_name(path.name + ".tmp")
    with opener(tmp, "wt", encoding="utf-8") as f:
        for d in dialogues:
            f.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path
