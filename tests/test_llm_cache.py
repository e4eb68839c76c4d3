"""The request cache under many writers, kills, damage, and the SQLite caches it replaces."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from benevaudit.llm import Completion, Sampling
from benevaudit.llm.cache import CachedChatModel, RequestCache, request_key
from benevaudit.llm.scripted import ScriptedChatModel

CONVS = [[{"role": "user", "content": "I want to run a marathon next year."}],
         [{"role": "user", "content": "Can I cook?"}]]

# A writer process: puts keys 0..n-1 from a shuffled order (overlapping other writers), each
# value a function of its key so a reader can check it, and prints a key once put_many returned.
WRITER = """
import hashlib, random, sys
from benevaudit.llm.cache import RequestCache
cache = RequestCache(sys.argv[1])
keys = list(range(int(sys.argv[3])))
random.Random(int(sys.argv[2])).shuffle(keys)
for i in keys:
    key = hashlib.sha256(str(i).encode()).hexdigest()
    cache.put_many("chat", {key: {"text": key * 2000, "audio": key[:8], "transcript": str(i)}})
    print(i, flush=True)
"""


def expected(i: int) -> tuple[str, dict[str, str]]:
    import hashlib

    key = hashlib.sha256(str(i).encode()).hexdigest()
    return key, {"text": key * 2000, "audio": key[:8], "transcript": str(i)}


def test_eight_writers_some_killed_leave_every_completed_key_whole(tmp_path) -> None:
    """8 processes write 60 overlapping keys of 128 kB each at once; 3 are SIGKILLed while
    writing. Every key a writer reported reads back intact, every file in the store is whole,
    and no surviving writer failed (there is no lock to fail on)."""
    store, n = tmp_path / "cache", 60
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(seed), str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for seed in range(8)]
    killed = procs[:3]
    deadline = time.monotonic() + 60
    while not store.exists() or len(list(store.glob("??/??/*"))) < 10:
        assert time.monotonic() < deadline, "writers made no progress"
        time.sleep(0.02)
    for proc in killed:
        proc.send_signal(signal.SIGKILL)
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, err) in zip(procs[3:], outputs[3:], strict=True):
        assert proc.returncode == 0, err[-2000:]
    assert all(proc.returncode == -signal.SIGKILL for proc in killed)
    reported = {int(line) for out, _ in outputs for line in out.split()}
    cache = RequestCache(store)
    want = dict(expected(i) for i in range(n))
    assert reported == set(range(n))           # the survivors wrote every key
    assert cache.get_many(list(want)) == want
    files = [p for p in store.glob("??/??/*") if not p.name.startswith(".tmp-")]
    assert len(files) == n == len(cache)


def test_a_damaged_file_is_a_miss_and_is_sent_again(tmp_path) -> None:
    inner = ScriptedChatModel()
    model = CachedChatModel(inner, tmp_path / "cache")
    first = model.chat(CONVS, Sampling(seed=2))
    key = request_key(inner, "chat", CONVS[0], {**Sampling(seed=2).__dict__})
    file = model.cache.file_of(key)
    file.write_bytes(file.read_bytes()[:-3])           # cut short, as by a node crash
    again = model.chat(CONVS, Sampling(seed=2))
    assert [c.cached for c in again] == [False, True] and inner.chat_calls == 2
    assert [c.text for c in again] == [c.text for c in first]


def test_audio_and_transcript_round_trip(tmp_path) -> None:
    spoken = Completion("hi", "stop", 3, 1, audio="UklGRiQAAABXQVZF", transcript="Hi there.")

    class Spoken(ScriptedChatModel):
        def chat(self, conversations, sampling):  # type: ignore[no-untyped-def]
            return [spoken for _ in conversations]

    model = CachedChatModel(Spoken(), tmp_path / "cache")
    model.chat(CONVS[:1], Sampling())
    hit = CachedChatModel(Spoken(), tmp_path / "cache").chat(CONVS[:1], Sampling())[0]
    assert hit.audio == spoken.audio and hit.transcript == spoken.transcript and hit.cached


def test_an_earlier_sqlite_cache_is_migrated_and_kept(tmp_path) -> None:
    """A ``requests.sqlite`` of an earlier release (its schema, WAL mode) answers the same
    requests from the directory beside it, and the file itself is left as it was."""
    legacy = tmp_path / "requests.sqlite"
    inner = ScriptedChatModel()
    keys = [request_key(inner, "chat", c, Sampling().__dict__) for c in CONVS]
    db = sqlite3.connect(legacy)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS requests (key TEXT PRIMARY KEY, kind TEXT, value TEXT)")
    old = {"text": "from sqlite", "finish_reason": "stop", "prompt_tokens": 4,
           "completion_tokens": 2, "cached": False, "seed": None}   # no audio fields yet
    with db:
        db.executemany("INSERT INTO requests VALUES (?, ?, ?)",
                       [(k, "chat", json.dumps(old)) for k in keys])
    db.close()
    before = legacy.read_bytes()
    model = CachedChatModel(inner, legacy)
    out = model.chat(CONVS, Sampling())
    assert [c.text for c in out] == ["from sqlite"] * 2 and all(c.cached for c in out)
    assert inner.chat_calls == 0 and model.cache.path == tmp_path / "requests"
    assert legacy.read_bytes() == before and (tmp_path / "requests" / "migrated-from-sqlite").exists()


def test_counts_requests_hits_and_a_rerun_sends_none(tmp_path) -> None:
    model = CachedChatModel(ScriptedChatModel(), tmp_path / "cache")
    model.chat(CONVS, Sampling())
    assert model.counts() == {"requests_sent": 2.0, "cache_hits": 0.0, "retries": 0.0,
                              "failed": 0.0}
    rerun = CachedChatModel(ScriptedChatModel(), Path(tmp_path / "cache"))
    rerun.chat(CONVS, Sampling())
    assert rerun.counts()["requests_sent"] == 0 and rerun.counts()["cache_hits"] == 2
