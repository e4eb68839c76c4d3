"""The request cache keeps no bad entry: a stored reply that does not decode, or not as a reply
of its kind, is dropped with a warning and asked again, and its new record is what every later
handle reads; a cache that cannot be read at all (a torn or older SQLite file, a file where the
folder should be) is one error line saying that deleting it loses nothing but time."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

from benevaudit.errors import BenevauditError, InputError
from benevaudit.llm import Sampling
from benevaudit.llm.cache import CachedChatModel, RequestCache, request_key
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.llm.store import MAGIC, encode

CONVS = [[{"role": "user", "content": "Can I lift weights at my age?"}],
         [{"role": "user", "content": "Can I learn to swim?"}]]
EARLIER = {k: v for k, v in Sampling().__dict__.items() if k != "server_defaults"}


def framed(key: str, body: bytes) -> bytes:
    """A record whose checksum holds over ``body``, whatever ``body`` is."""
    return b"%s %s %08x %010d\n" % (MAGIC, key.encode(), zlib.crc32(body), len(body)) + body + b"\n"


def planted(cache: Path, records: bytes) -> None:
    """A segment written by an earlier writer (an hour ago: older than any written now)."""
    segment = cache / "segments" / "earlier-writer.log"
    segment.parent.mkdir(parents=True, exist_ok=True)
    segment.write_bytes(records)
    os.utime(segment, (segment.stat().st_atime - 3600, segment.stat().st_mtime - 3600))


def keys_of(model: ScriptedChatModel) -> list[str]:
    return [request_key(model, "chat", c, EARLIER) for c in CONVS]


@pytest.mark.parametrize("stored", [
    b'{"kind":"chat","value":{"text":"cut off', b'\xff\xfe not utf-8', b"[1, 2]",
    b'{"kind":"chat"}'])
def test_a_record_that_does_not_decode_is_dropped_asked_again_and_replaced(
        stored: bytes, tmp_path, caplog) -> None:
    inner = ScriptedChatModel()
    good, bad = keys_of(inner)
    planted(tmp_path / "c", encode(good, "chat", {"text": "kept", "finish_reason": "stop",
                                                  "prompt_tokens": 1, "completion_tokens": 1})
            + framed(bad, stored))
    with caplog.at_level(logging.WARNING, logger="benevaudit.llm"):
        out = CachedChatModel(inner, tmp_path / "c").chat(CONVS, Sampling())
    assert [c.cached for c in out] == [True, False] and out[0].text == "kept"
    assert inner.chat_calls == 1
    assert "1 cached replies do not decode; dropped, they are asked again" in caplog.text
    again = ScriptedChatModel()
    reread = CachedChatModel(again, tmp_path / "c").chat(CONVS, Sampling())
    assert all(c.cached for c in reread) and again.chat_calls == 0     # the new record won
    assert reread[1].text == out[1].text


@pytest.mark.parametrize("value", [
    {"response": "an older field name", "finish_reason": "stop"},
    {"text": None, "finish_reason": "stop", "prompt_tokens": 1, "completion_tokens": 1},
    {"text": "x", "finish_reason": "stop", "prompt_tokens": "1", "completion_tokens": 1},
    "a bare string", [0.5, 0.5]])
def test_a_stored_value_that_is_not_a_chat_reply_is_dropped_and_asked_again(
        value: object, tmp_path, caplog) -> None:
    inner = ScriptedChatModel()
    planted(tmp_path / "c", encode(keys_of(inner)[0], "chat", value))
    with caplog.at_level(logging.WARNING, logger="benevaudit.llm"):
        out = CachedChatModel(inner, tmp_path / "c").chat(CONVS, Sampling())
    assert not any(c.cached for c in out) and isinstance(out[0].text, str)
    assert "are not chat replies of this release's shape" in caplog.text
    assert all(c.cached for c in CachedChatModel(ScriptedChatModel(), tmp_path / "c").chat(
        CONVS, Sampling()))


def test_a_score_row_of_the_wrong_length_is_asked_again(tmp_path, caplog) -> None:
    inner = ScriptedChatModel()
    key = request_key(inner, "score", CONVS[0], ["yes", "no"])
    planted(tmp_path / "c", encode(key, "score", [-0.1, -2.0, -5.0]))
    with caplog.at_level(logging.WARNING, logger="benevaudit.llm"):
        rows = CachedChatModel(inner, tmp_path / "c").score(CONVS[:1], ["yes", "no"])
    assert rows.shape == (1, 2) and inner.score_calls == 1
    assert "are not score replies" in caplog.text


def earlier_release(path: Path, rows: list[tuple[object, object, object]]) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE requests (key TEXT PRIMARY KEY, kind TEXT, value TEXT)")
    with db:
        db.executemany("INSERT INTO requests VALUES (?, ?, ?)", rows)
    db.close()
    return path


def torn(path: Path) -> Path:
    """An earlier release's cache cut to its first page: the header holds, the tables do not."""
    earlier_release(path, [(f"{i:064x}", "chat", json.dumps({"text": "x" * 3000}))
                           for i in range(40)])
    path.write_bytes(path.read_bytes()[:4096 + 100])
    return path


def older(path: Path) -> Path:
    """A SQLite file from before the requests table (another schema)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cache (hash TEXT, reply BLOB)")
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("spoil", [torn, older], ids=["torn", "older format"])
def test_an_earlier_cache_that_cannot_be_read_is_one_line_saying_deleting_it_is_safe(
        spoil, tmp_path) -> None:
    legacy = spoil(tmp_path / "requests.sqlite")
    with pytest.raises(InputError) as err:
        CachedChatModel(ScriptedChatModel(), legacy)
    message = str(err.value)
    assert message.startswith(f"{legacy}: a request cache that cannot be read")
    assert "loses nothing but time" in message and "\n" not in message


def test_rows_of_an_earlier_cache_that_do_not_decode_are_left_out(tmp_path, caplog) -> None:
    inner = ScriptedChatModel()
    good, bad = keys_of(inner)
    reply = {"text": "from sqlite", "finish_reason": "stop", "prompt_tokens": 4,
             "completion_tokens": 2}
    legacy = earlier_release(tmp_path / "requests.sqlite", [
        (good, "chat", json.dumps(reply)), (bad, "chat", '{"text": "cut'),
        ("not-a-key", "chat", json.dumps(reply)), ("f" * 64, None, json.dumps(reply))])
    with caplog.at_level(logging.WARNING, logger="benevaudit.llm"):
        out = CachedChatModel(inner, legacy).chat(CONVS, Sampling())
    assert [c.cached for c in out] == [True, False] and out[0].text == "from sqlite"
    assert "3 of its 4 cached replies do not decode" in caplog.text


def test_a_file_where_the_cache_folder_should_be_is_one_line(tmp_path) -> None:
    (tmp_path / "cache").write_text("notes")
    with pytest.raises(BenevauditError) as err:
        RequestCache(tmp_path / "cache")
    assert str(tmp_path / "cache") in str(err.value) and "\n" not in str(err.value)
