"""SQLite request cache: an interrupted sweep resumes where it stopped, a repeat run is free.

Each conversation is one row, keyed by the sha256 of (backend, model, chat-template hash,
messages, sampling incl. seed) for ``chat`` and (backend, model, template hash, messages,
choices) for ``score``. Only the misses of a call reach the backend, in one batch. The
database runs in WAL mode so several readers (and one writer at a time) can share it.

With temperature > 0 every backend samples a request from its own seed (``request_seed``, kept
on the ``Completion``), so a cached reply is the one a fresh run of that request would give
(on ``openai``, as far as the server honours seeds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling

_SCHEMA = "CREATE TABLE IF NOT EXISTS requests (key TEXT PRIMARY KEY, kind TEXT, value TEXT)"


class RequestCache:
    """A key -> JSON value store in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # timeout: wait for another process's write instead of failing with "database is locked"
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        """Values of the keys present; absent keys are simply missing from the result."""
        found: dict[str, object] = {}
        with self._lock:
            for start in range(0, len(keys), 500):  # stay under SQLite's bound-parameter limit
                chunk = list(keys[start:start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value FROM requests WHERE key IN ({marks})", chunk)
                found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, kind: str, items: dict[str, object]) -> None:
        """Store values in one transaction, so a crash leaves whole batches or nothing."""
        rows = [(k, kind, json.dumps(v)) for k, v in items.items()]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO requests VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM requests").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def request_key(model: ChatModel, kind: str, conversation: Conversation, extra: object) -> str:
    """sha256 of everything that determines the answer; ``extra`` is the sampling or choices."""
    payload = json.dumps(
        [kind, model.name, model.model_id, model.template_hash, conversation, extra],
        sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedChatModel(ChatModel):
    """Wraps a backend; answers repeated requests from the cache with ``cached=True``."""

    def __init__(self, model: ChatModel, path: str | Path) -> None:
        self.model = model
        self.cache = RequestCache(path)
        self.name, self.model_id = model.name, model.model_id
        self.template_hash = model.template_hash
        self.hits = 0
        self.misses = 0

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        extra = dataclasses.asdict(sampling)
        if not sampling.server_defaults:   # keys written before the field existed stay valid
            del extra["server_defaults"]
        keys = [request_key(self.model, "chat", c, extra) for c in conversations]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        fresh: dict[str, object] = {}
        if todo:
            replies = self.model.chat([conversations[i] for i in todo], sampling)
            for i, reply in zip(todo, replies, strict=True):
                fresh[keys[i]] = dataclasses.asdict(dataclasses.replace(reply, cached=False))
            self.cache.put_many("chat", fresh)
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        out = []
        for k in keys:
            if k in fresh:
                out.append(Completion(**fresh[k]))
            else:
                out.append(Completion(**{**found[k], "cached": True}))
        return out

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        keys = [request_key(self.model, "score", c, list(choices)) for c in conversations]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            scores = self.model.score([conversations[i] for i in todo], choices)  # [len(todo), C]
            fresh = {keys[i]: [float(x) for x in row] for i, row in zip(todo, scores, strict=True)}
            self.cache.put_many("score", fresh)
            found.update(fresh)
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        return np.array([found[k] for k in keys], dtype=np.float64).reshape(len(keys), len(choices))

    def close(self) -> None:
        self.cache.close()
        self.model.close()
