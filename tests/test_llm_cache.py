"""The request cache under many writers, kills, damage, and the SQLite caches it replaces."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from benevaudit.errors import ServerError
from benevaudit.llm import Completion, Sampling, build_chat_model
from benevaudit.llm.cache import CachedChatModel, RequestCache, request_key
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.llm.store import HEADER, records

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
    writing. Every key reads back intact, every record in the store is whole, and no surviving
    writer failed (there is no lock to fail on)."""
    store, n = tmp_path / "cache", 60
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(seed), str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for seed in range(8)]
    killed = procs[:3]
    deadline = time.monotonic() + 60
    while sum(p.stat().st_size for p in store.glob("segments/*.log")) < 10 * 128_000:
        assert time.monotonic() < deadline, "writers made no progress"
        time.sleep(0.01)
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
    assert len(cache) == n and 5 <= len(list(store.glob("segments/*.log"))) <= 8
    # every record of every segment is whole; only a killed writer's segment may end torn
    for segment in store.glob("segments/*.log"):
        data = segment.read_bytes()
        ends = [end for _, _, end in records(data)]
        assert (ends[-1] if ends else 0) <= len(data)
        for key, entry, _ in records(data):
            body = data[entry.offset:entry.offset + entry.length]
            assert zlib.crc32(body) == entry.crc and json.loads(body)["value"] == want[key]


def test_a_damaged_record_is_a_miss_and_is_sent_again(tmp_path) -> None:
    inner = ScriptedChatModel()
    model = CachedChatModel(inner, tmp_path / "cache")
    first = model.chat(CONVS, Sampling(seed=2))
    (segment,) = (tmp_path / "cache" / "segments").glob("*.log")
    data = bytearray(segment.read_bytes())
    data[HEADER + 20] ^= 0xFF               # a flipped byte in the first record's value
    segment.write_bytes(bytes(data))
    again = CachedChatModel(inner, tmp_path / "cache").chat(CONVS, Sampling(seed=2))
    assert [c.cached for c in again] == [False, True] and inner.chat_calls == 2
    assert [c.text for c in again] == [c.text for c in first]


def test_a_torn_tail_is_skipped_and_other_writers_are_found(tmp_path) -> None:
    """A record cut short (a killed writer) is absent; a second handle finds what a first one
    wrote after it opened."""
    reader = RequestCache(tmp_path / "cache")
    writer = RequestCache(tmp_path / "cache")
    writer.put_many("chat", {"a" * 64: 1, "b" * 64: 2})
    (segment,) = (tmp_path / "cache" / "segments").glob("*.log")
    segment.write_bytes(segment.read_bytes()[:-5])
    assert reader.get_many(["a" * 64, "b" * 64]) == {"a" * 64: 1}


def test_compact_merges_segments_into_one(tmp_path) -> None:
    for i in range(3):
        RequestCache(tmp_path / "cache").put_many("chat", {str(i) * 64: i, "f" * 64: 9})
    cache = RequestCache(tmp_path / "cache")
    assert cache.compact() == 4
    assert len(list((tmp_path / "cache" / "segments").glob("*.log"))) == 1
    assert RequestCache(tmp_path / "cache").get_many(["0" * 64, "2" * 64, "f" * 64]) == {
        "0" * 64: 0, "2" * 64: 2, "f" * 64: 9}


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
    earlier = {k: v for k, v in Sampling().__dict__.items() if k != "server_defaults"}
    keys = [request_key(inner, "chat", c, earlier) for c in CONVS]
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
    assert legacy.read_bytes() == before
    assert (tmp_path / "requests" / "segments" / "migrated-from-sqlite.log").is_file()


def test_counts_requests_hits_and_a_rerun_sends_none(tmp_path) -> None:
    model = CachedChatModel(ScriptedChatModel(), tmp_path / "cache")
    model.chat(CONVS, Sampling())
    assert model.counts() == {"requests_sent": 2.0, "cache_hits": 0.0, "retries": 0.0,
                              "failed": 0.0}
    rerun = CachedChatModel(ScriptedChatModel(), Path(tmp_path / "cache"))
    rerun.chat(CONVS, Sampling())
    assert rerun.counts()["requests_sent"] == 0 and rerun.counts()["cache_hits"] == 2


class DownAfter(ScriptedChatModel):
    """Answers its first ``n`` requests, then fails as a server that stays down does: a
    ServerError carrying the answers of the call it did give."""

    def __init__(self, n: int, model: str) -> None:
        super().__init__()
        self.left, self.model_id = n, model

    def chat(self, conversations, sampling):  # type: ignore[no-untyped-def]
        done = dict(enumerate(super().chat(conversations[:self.left], sampling)))
        self.left -= len(done)
        if len(done) < len(conversations):
            raise ServerError("http://judge.test/v1: server down", done)
        return list(done.values())


def test_a_failure_with_a_cache_that_is_still_empty_says_the_answers_are_kept(tmp_path) -> None:
    """An empty cache tests false (``len`` 0); the message must not say there is none."""
    model = CachedChatModel(DownAfter(0, "m"), tmp_path / "cache")
    assert len(model.cache) == 0
    with pytest.raises(ServerError) as err:
        model.chat(CONVS, Sampling())
    assert "kept in the request cache" in str(err.value)
    assert "no request cache" not in str(err.value)
    bare = CachedChatModel(DownAfter(0, "m"), None)
    with pytest.raises(ServerError, match=r"not kept \(no request cache\)"):
        bare.chat(CONVS, Sampling())


def test_a_judges_failure_reports_its_own_count_and_the_runs(tmp_path) -> None:
    """The target answered 5 requests and the judge none when its server went down: the
    judge's error says 0 of its own and 5 over the run, where it said "0 of this run"."""
    from benevaudit.llm import reset_request_counts

    def down(conversation, sampling):  # type: ignore[no-untyped-def]
        raise ServerError("http://judge.test/v1: server down")

    reset_request_counts()
    target = build_chat_model("scripted", cache=tmp_path / "cache")
    judge = build_chat_model("scripted", cache=tmp_path / "cache", responses=down,
                             model="judge-model")
    target.chat([[{"role": "user", "content": f"question {i}"}] for i in range(5)], Sampling())
    with pytest.raises(ServerError) as err:
        judge.chat(CONVS, Sampling())
    message = str(err.value)
    assert message.startswith("http://judge.test/v1: server down; ")
    assert "0 requests to scripted:judge-model answered (5 over all the run's models)" in message
    assert "\n" not in message
    reset_request_counts()
