"""A corpus folder that survives ``kill -9`` at any point: ``generate.py``'s
:class:`~benevaudit.generation.sink.CorpusSink` (:class:`CorpusShards`), resumable and sharded.

Layout of an output directory::

    manifest.json            the expected ids and generation parameters (written first)
    shard-00000.parquet      sealed shards: complete, immutable, read by benevaudit.corpus
    shard-00001.journal      the open shard: JSONL, flushed and fsynced after every batch
    failures/failures.jsonl  every failed attempt with its reason and raw text
    dataset_card.json, README.md, _COMPLETE   written once every id has been attempted

A journal is not a corpus file (its suffix is not one the readers accept), so a directory read
mid-run sees only sealed shards. On resume a journal's complete lines are kept, a torn last line
is dropped, and the journal is sealed before new work starts; ids already present are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from benevaudit.corpus import write_parquet
from benevaudit.errors import BenevauditError
from benevaudit.files import read_json
from benevaudit.generation.card import sealed_shards
from benevaudit.generation.sink import MANIFEST
from benevaudit.schema import ARROW_SCHEMA, Dialogue

__all__ = ["COMPLETE", "FAILURES", "MANIFEST", "CorpusShards", "FailureLog", "ResumeError",
           "ShardWriter", "recover", "write_manifest"]

COMPLETE = "_COMPLETE"
FAILURES = Path("failures") / "failures.jsonl"


class ResumeError(BenevauditError):
    """The output directory holds a different generation than the one requested."""


def dialogue_row(d: Dialogue) -> dict[str, Any]:
    """The record as plain JSON types (faster than ``dataclasses.asdict`` at corpus scale)."""
    return {"id": d.id, "label": d.label, "role": d.role, "generator": d.generator,
            "user": d.user, "agent": d.agent,
            "turns": [{"speaker": t.speaker, "text": t.text} for t in d.turns],
            "split": d.split, "meta": d.meta}


def write_durably(path: Path, text: str) -> None:
    """Write a small file atomically and durably (temporary name, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def ids_digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def write_manifest(out_dir: Path, ids: Sequence[str], params: dict[str, Any]) -> None:
    """Write the manifest, or check that an existing one asks for the same generation."""
    path = out_dir / MANIFEST
    digest = ids_digest(ids)
    if path.is_file():
        old = read_json(path, expected="the manifest.json generate.py writes in out_dir")
        before = old.get("params") if isinstance(old, dict) else None
        if not isinstance(before, dict):
            raise ResumeError(f"{path}: not the manifest generate.py writes (expected an object "
                              "with 'params' and 'ids_sha256'); choose a new out_dir")
        if old.get("ids_sha256") != digest or before != params:
            changed = sorted(k for k in set(before) | set(params)
                             if before.get(k) != params.get(k))
            raise ResumeError(
                f"{path}: this directory holds a different generation (changed: "
                f"{changed or ['the id list']}); resume with the same settings or choose a new "
                "out_dir")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    write_durably(path, json.dumps({"count": len(ids), "ids_sha256": digest, "params": params,
                                   "ids": list(ids)}, indent=0) + "\n")


def _read_journal(path: Path) -> list[dict[str, Any]]:
    """The complete records of a journal; a torn or undecodable last line is cut off the file."""
    rows, good = [], 0
    with open(path, "rb") as f:
        data = f.read()
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break  # torn by a kill mid-write
        try:
            rows.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError):
            break  # a partly flushed line; nothing after it can be trusted either
        good += len(line)
    if good != len(data):
        with open(path, "r+b") as f:
            f.truncate(good)
    return rows


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    encoded = [{**r, "meta": json.dumps(r["meta"], sort_keys=True) if r.get("meta") else None}
               for r in rows]
    return pa.Table.from_pylist(encoded, schema=ARROW_SCHEMA)


def _seal(journal: Path, rows: list[dict[str, Any]]) -> None:
    """Turn a journal into its Parquet shard (atomic), then drop the journal."""
    if rows:
        write_parquet(_table(rows), journal.with_suffix(".parquet"))
    journal.unlink()


def recover(out_dir: Path) -> set[str]:
    """Seal journals left by a killed run and return the ids already written."""
    for journal in sorted(out_dir.glob("shard-*.journal")):
        if journal.with_suffix(".parquet").is_file():  # killed after sealing, before unlinking
            journal.unlink()
        else:
            _seal(journal, _read_journal(journal))
    done: set[str] = set()
    for shard in sorted(out_dir.glob("shard-*.parquet")):
        done.update(pq.read_table(shard, columns=["id"]).column("id").to_pylist())
    return done


class ShardWriter:
    """Append dialogues to journals of ``shard_size`` records, sealing each when full."""

    def __init__(self, out_dir: str | Path, shard_size: int = 10_000) -> None:
        self.out_dir = Path(out_dir)
        self.shard_size = shard_size
        existing = [int(p.stem.split("-")[1]) for p in self.out_dir.glob("shard-*.parquet")]
        self._next = max(existing, default=-1) + 1
        self._rows: list[dict[str, Any]] = []
        self._file: TextIO | None = None

    def _journal(self) -> Path:
        return self.out_dir / f"shard-{self._next:05d}.journal"

    def write(self, dialogues: Iterable[Dialogue]) -> int:
        """Append one batch durably (flush + fsync); returns how many were written."""
        rows = [dialogue_row(d) for d in dialogues]
        n = len(rows)
        while rows:
            if self._file is None:
                self._file = open(self._journal(), "a", encoding="utf-8")
            journal = self._file
            room = self.shard_size - len(self._rows)
            part, rows = rows[:room], rows[room:]
            journal.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part))
            journal.flush()
            os.fsync(journal.fileno())
            self._rows += part
            if len(self._rows) >= self.shard_size:
                self.seal()
        return n

    def seal(self) -> None:
        """Close the open journal as a Parquet shard."""
        if self._file is None:
            return
        self._file.close()
        self._file = None
        _seal(self._journal(), self._rows)
        self._rows = []
        self._next += 1

    def close(self) -> None:
        self.seal()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Close the open journal unsealed: it is durable, and the next run seals it."""
        if self._file is not None:
            self._file.close()
            self._file = None


class FailureLog:
    """Append-only record of failed attempts; nothing that failed is silently dropped."""

    def __init__(self, out_dir: str | Path) -> None:
        self.path = Path(out_dir) / FAILURES
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, dialogue_id: str, attempt: int, reason: str, raw: str,
               final: bool = False) -> None:
        line = json.dumps({"id": dialogue_id, "attempt": attempt, "reason": reason,
                           "final": final, "raw": raw}, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[dict[str, Any]]:
        return _read_journal(self.path) if self.path.is_file() else []


class CorpusShards:
    """The corpus folder ``out_dir`` as a :class:`~benevaudit.generation.sink.CorpusSink`:
    the manifest checked or written, journals of a killed run sealed, dialogues journaled in
    shards of ``shard_size``, failed attempts appended, the card, README and ``_COMPLETE``
    written last."""

    def __init__(self, out_dir: str | Path, shard_size: int = 10_000) -> None:
        self.out_dir, self.shard_size = Path(out_dir), shard_size
        self._shards: ShardWriter | None = None
        self._failures: FailureLog | None = None

    @property
    def name(self) -> str:
        return self.out_dir.name

    def start(self, ids: Sequence[str], params: dict[str, Any]) -> set[str]:
        write_manifest(self.out_dir, ids, params)
        (self.out_dir / COMPLETE).unlink(missing_ok=True)
        done = recover(self.out_dir)
        self._failures = FailureLog(self.out_dir)
        self._shards = ShardWriter(self.out_dir, self.shard_size)
        return done

    def _started(self) -> tuple[ShardWriter, FailureLog]:
        if self._shards is None or self._failures is None:
            raise RuntimeError(f"{self.out_dir}: start() the corpus before writing to it")
        return self._shards, self._failures

    def write(self, dialogues: Sequence[Dialogue]) -> int:
        return self._started()[0].write(dialogues)

    def record(self, dialogue_id: str, attempt: int, reason: str, raw: str,
               final: bool = False) -> None:
        self._started()[1].record(dialogue_id, attempt, reason, raw, final)

    def failures(self) -> list[dict[str, Any]]:
        return self._started()[1].read()

    def seal(self) -> None:
        self._started()[0].close()

    def release(self) -> None:
        if self._shards is not None:
            self._shards.release()

    def table(self) -> pa.Table | None:
        return sealed_shards(self.out_dir)

    def finish(self, card: dict[str, Any], readme: str) -> None:
        write_durably(self.out_dir / "dataset_card.json",
                      json.dumps(card, indent=1, sort_keys=True) + "\n")
        write_durably(self.out_dir / "README.md", readme)
        write_durably(self.out_dir / COMPLETE, json.dumps({
            "dialogues": card["statistics"]["dialogues"], "expected": card["expected"],
            "pid": os.getpid()}) + "\n")
