"""The request cache: an interrupted sweep resumes where it stopped, a repeat run is free.

Each request is one file, named by the sha256 of (backend, model, chat-template hash, messages,
request options, sampling incl. seed) for ``chat`` and (backend, model, template hash, messages,
choices) for ``score``. Only the misses of a call reach the backend, in one batch.

Why one file per key, written under a temporary name and renamed into place: at paper scale
many jobs on many nodes share one cache on a network file system (NFS, Lustre). A database
needs locks or host-shared memory there (SQLite's WAL mode does not work on a network file
system, and its locks can fail or corrupt the file). ``rename`` within a directory is atomic on
POSIX and on NFS, so a reader sees either no file or the whole file, never a torn one; two jobs
writing the same key write the same content and the last rename wins; no lock is ever taken.
A writer killed mid-write leaves only its temporary file (``.tmp-*``), which no reader opens.
Each file carries its key and a checksum of its value, so a file damaged by a node crash (data
not yet on disk) reads as a miss and is sent again, never as a wrong reply. Keys are spread over
256 x 256 directories so no directory grows past what network file systems list quickly.

A SQLite cache of earlier releases (``requests.sqlite``) is migrated on first use into the
directory of the same name without the suffix, and the file is left as it was.

With temperature > 0 every backend samples a request from its own seed (``request_seed``, kept
on the ``Completion``), so a cached reply is the one a fresh run of that request would give
(on ``openai``, as far as the server honours seeds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import uuid
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benevaudit.errors import ServerError
from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling

LEGACY_SUFFIXES = (".sqlite", ".sqlite3", ".db")
MIGRATED = "migrated-from-sqlite"
_MAX_VALUE = 1 << 30


def store_dir(path: str | Path) -> Path:
    """The cache directory a configured path names: itself, or for a ``.sqlite`` path (the
    earlier single-file cache) the directory beside it without the suffix."""
    path = Path(path).expanduser()
    return path.with_suffix("") if path.suffix in LEGACY_SUFFIXES else path


def _encode(key: str, kind: str, value: object) -> bytes:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    head = json.dumps({"key": key, "kind": kind, "crc": zlib.crc32(body.encode("utf-8"))})
    return f"{head}\n{body}".encode()


def _decode(key: str, data: bytes) -> object | None:
    """The value in a file's bytes, or None when the file is not whole (wrong key, checksum)."""
    head, sep, body = data.partition(b"\n")
    if not sep:
        return None
    try:
        meta = json.loads(head)
        if meta["key"] != key or zlib.crc32(body) != meta["crc"]:
            return None
        return json.loads(body)
    except (ValueError, KeyError, TypeError):
        return None


class RequestCache:
    """A key -> JSON value store: one file per key under ``<dir>/ab/cd/<key>``."""

    def __init__(self, path: str | Path) -> None:
        self.path = store_dir(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._tag = f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        legacy = Path(path).expanduser()
        if legacy != self.path and legacy.is_file() and legacy.stat().st_size:
            self._migrate(legacy)

    def file_of(self, key: str) -> Path:
        return self.path / key[:2] / key[2:4] / key

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        """Values of the keys present; absent (or damaged) keys are simply missing."""
        found: dict[str, object] = {}
        root = str(self.path)
        for key in keys:
            try:
                fd = os.open(f"{root}/{key[:2]}/{key[2:4]}/{key}", os.O_RDONLY)
            except (FileNotFoundError, NotADirectoryError):
                continue
            try:
                data = _read_all(fd)
            finally:
                os.close(fd)
            value = _decode(key, data)
            if value is not None:
                found[key] = value
        return found

    def put_many(self, kind: str, items: dict[str, object]) -> None:
        """Store each value by temporary name + fsync + rename: whole files or none."""
        for key, value in items.items():
            self._put(self.file_of(key), _encode(key, kind, value))

    def _put(self, target: Path, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".tmp-{target.name[:16]}-{self._tag}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)   # the data reaches the server before the name does (NFS commit)
        finally:
            os.close(fd)
        os.replace(tmp, target)

    def _migrate(self, legacy: Path) -> None:
        """Copy the rows of a SQLite cache into files once (rerunning it is harmless: the same
        key gets the same content), then mark the directory so later opens skip it."""
        marker = self.path / MIGRATED
        if marker.exists():
            return
        db = sqlite3.connect(f"file:{legacy}?mode=ro", uri=True)
        try:
            for key, kind, value in db.execute("SELECT key, kind, value FROM requests"):
                if not self.file_of(key).exists():
                    self._put(self.file_of(key), _encode(key, kind, json.loads(value)))
        finally:
            db.close()
        self._put(marker, str(legacy).encode())

    def __len__(self) -> int:
        return sum(1 for p in self.path.glob("??/??/*") if not p.name.startswith(".tmp-"))

    def close(self) -> None:
        """Nothing is held open between calls."""


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        if sum(map(len, chunks)) > _MAX_VALUE:
            return b""


def request_key(model: ChatModel, kind: str, conversation: Conversation, extra: object) -> str:
    """sha256 of everything that determines the answer; ``extra`` is the sampling or choices.

    A backend's own request options (``modalities``, ``audio``) join the key only where set, so
    the keys of requests without them are those earlier releases wrote."""
    options = model.request_options()
    parts = [kind, model.name, model.model_id, model.template_hash, conversation, extra]
    payload = json.dumps(parts + [options] if options else parts,
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedChatModel(ChatModel):
    """Wraps a backend; answers repeated requests from the cache with ``cached=True``.

    ``path`` None keeps no cache and only counts. The counts (``counts()``) go to a run's
    ``metrics.json``: requests sent to the backend, answered from the cache, retried, failed.
    """

    def __init__(self, model: ChatModel, path: str | Path | None) -> None:
        self.model = model
        self.cache = RequestCache(path) if path is not None else None
        self.name, self.model_id = model.name, model.model_id
        self.template_hash = model.template_hash
        self.hits = 0
        self.misses = 0
        self.failed = 0

    def request_options(self) -> dict[str, object]:
        return self.model.request_options()

    def __getattr__(self, name: str) -> Any:
        # the backend's own attributes (a tokenizer, an engine) stay reachable through the wrap
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def counts(self) -> dict[str, float]:
        """``requests_sent``, ``cache_hits``, ``retries``, ``failed`` so far."""
        return {"requests_sent": float(self.misses), "cache_hits": float(self.hits),
                "retries": float(getattr(self.model, "retries", 0)),
                "failed": float(self.failed)}

    def _lookup(self, keys: list[str]) -> dict[str, object]:
        return self.cache.get_many(keys) if self.cache is not None else {}

    def _ask(self, kind: str, keys: list[str], todo: list[int], send: Any,
             encode: Any) -> dict[str, object]:
        """Send the misses; keep every answer that came back, also when some failed."""
        error: ServerError | None = None
        try:
            answers = dict(enumerate(send()))
        except ServerError as err:
            answers, error = err.done, err
        fresh = {keys[todo[j]]: encode(a) for j, a in answers.items()}
        if self.cache is not None:
            self.cache.put_many(kind, fresh)
        self.misses += len(todo)
        if error is not None:
            self.failed += len(todo) - len(answers)
            answered = self.hits + self.misses - self.failed
            kept = "kept in the request cache: a rerun sends only the rest" if self.cache \
                else "not kept (no request cache)"
            raise ServerError(f"{error}; {answered} requests of this run answered, {kept}",
                              error.done) from None
        return fresh

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        extra = dataclasses.asdict(sampling)
        keys = [request_key(self.model, "chat", c, extra) for c in conversations]
        found = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        fresh: dict[str, object] = {}
        if todo:
            fresh = self._ask("chat", keys, todo, lambda: self.model.chat(
                [conversations[i] for i in todo], sampling),
                lambda r: dataclasses.asdict(dataclasses.replace(r, cached=False)))
        self.hits += len(keys) - len(todo)
        return [Completion(**_fields(fresh[k])) if k in fresh
                else Completion(**{**_fields(found[k]), "cached": True}) for k in keys]

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        keys = [request_key(self.model, "score", c, list(choices)) for c in conversations]
        found = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            found.update(self._ask("score", keys, todo, lambda: self.model.score(
                [conversations[i] for i in todo], choices),   # [len(todo), C]
                lambda row: [float(x) for x in row]))
        self.hits += len(keys) - len(todo)
        return np.array([found[k] for k in keys], dtype=np.float64).reshape(len(keys), len(choices))

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        self.model.close()


def _fields(value: object) -> dict[str, Any]:
    """A stored completion's fields (a JSON object: what ``dataclasses.asdict`` wrote)."""
    assert isinstance(value, dict)
    return value
