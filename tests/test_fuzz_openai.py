"""Fuzz tier: the ``openai`` backend against a stdlib server on 127.0.0.1 that answers the
second request of a call with a generated malformed reply (a slot of a chat completion replaced
by any JSON value or removed, or its bytes spoilt). Each case ends in one error line naming the
URL with the first answer kept in the cache, or in a clean recovery: replies of the right types,
both cached. Nothing is lost either way: a rerun against a healthy server sends only what is
missing and gets every answer."""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benevaudit.errors import ServerError
from benevaudit.llm import Sampling, build_chat_model
from fuzz_strategies import FUZZ, one_line, spoilt_json
from raw_server import RawServer, as_json, completion, echo

pytestmark = pytest.mark.fuzz

CONVS = [[{"role": "user", "content": "First?"}], [{"role": "user", "content": "Second?"}]]
WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"
SPOKEN = dict(modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"})
VALID = {"text": completion("a secret reply"),
         "spoken": completion(None, audio={"id": "a1", "data": WAV, "expires_at": 1,
                                           "transcript": "a secret reply"})}


class Faulty:
    """Answers the first request of each call well and the second with ``self.body``."""

    def __init__(self) -> None:
        self.body = b""
        self.server = RawServer(self.answer)

    def answer(self, path: str, body: dict[str, Any], n: int) -> tuple[int, str, bytes]:
        if body["messages"][-1]["content"] == "Second?":
            return 200, "application/json", self.body
        return echo(path, body, n)


@pytest.fixture(scope="module")
def faulty() -> Iterator[Faulty]:
    server = Faulty()
    yield server
    server.server.close()


@pytest.fixture(scope="module")
def healthy() -> Iterator[RawServer]:
    server = RawServer(lambda path, body, n: as_json(VALID["spoken"]) if "audio" in body
                       else echo(path, body, n))
    yield server
    server.close()


@pytest.mark.parametrize("kind", list(VALID))
@FUZZ
@given(data=st.data())
def test_a_malformed_reply_is_one_line_or_a_clean_reply_and_nothing_is_lost(
        kind: str, faulty: Faulty, healthy: RawServer, data: st.DataObject) -> None:
    faulty.body = data.draw(spoilt_json(VALID[kind]), label="reply")
    options = SPOKEN if kind == "spoken" else {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        model = build_chat_model("openai", model="m", base_url=faulty.server.url, cache=cache,
                                 concurrency=1, max_retries=0, **options)
        try:
            out = model.chat(CONVS, Sampling())
        except ServerError as err:
            message = one_line(err, "a secret reply")
            assert message.startswith(f"{faulty.server.url}: chat failed after 0 retries (a "
                                      "malformed reply: "), message
            assert "1 requests to openai:m answered" in message
        else:
            assert all(isinstance(c.text, str) and isinstance(c.finish_reason, str) for c in out)
            assert all(c.audio is None or isinstance(c.transcript, str) for c in out)
        before = len(healthy.bodies)
        rerun = build_chat_model("openai", model="m", base_url=healthy.url, cache=cache,
                                 **options).chat(CONVS, Sampling())
        assert rerun[0].cached and rerun[0].text == "FIRST?"
        assert len(healthy.bodies) - before == (0 if rerun[1].cached else 1)


def test_the_valid_replies_are_read(faulty: Faulty) -> None:
    """The strategies' starting points are whole replies (the fuzz spoils something valid)."""
    faulty.body = json.dumps(VALID["text"]).encode()
    out = build_chat_model("openai", model="m", base_url=faulty.server.url).chat(CONVS,
                                                                                Sampling())
    assert out[1].text == "a secret reply"
    faulty.body = json.dumps(VALID["spoken"]).encode()
    spoken = build_chat_model("openai", model="m", base_url=faulty.server.url,
                              **SPOKEN).chat(CONVS, Sampling())[1]
    assert base64.b64decode(spoken.audio or "")[:4] == b"RIFF"
