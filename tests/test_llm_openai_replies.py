"""Every reply of an OpenAI-compatible server is checked before it is used or cached: a body
that is not a chat completion (torn JSON, an error page, ``choices`` missing or empty, a message
without ``content``, audio that is not audio) is asked again under the retry policy and, still
malformed, ends the call with one ``ServerError`` naming the URL; the answers already received
stay in the cache and a rerun sends only the rest. The same holds for ``score``'s replies."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from benevaudit.errors import ServerError
from benevaudit.llm import Sampling, build_chat_model, request_metrics, reset_request_counts
from raw_server import Answer, RawServer, as_json, completion, echo

CONVS = [[{"role": "user", "content": f"Question {i}?"}] for i in range(4)]
GOOD = json.dumps(completion("fine")).encode()
MALFORMED = {
    "torn JSON": (200, "application/json", GOOD[: len(GOOD) // 2]),
    "an error page": (200, "text/html", b"<html>upstream timed out</html>"),
    "choices missing": as_json({"id": "x", "object": "chat.completion"}),
    "choices empty": as_json({**completion(), "choices": []}),
    "no content": as_json({**completion(), "choices": [{"index": 0, "finish_reason": "stop",
                                                        "message": {"role": "assistant"}}]}),
    "content a number": as_json(completion(42)),
    "a list": as_json([completion()]),
    "audio not base64": as_json(completion("", audio={"data": "%%%", "transcript": "t"})),
    "audio not a WAV": as_json(completion("", audio={
        "data": base64.b64encode(b"<html>").decode(), "transcript": "t"})),
    "audio without transcript": as_json(completion("", audio={"data": "UklGRg=="})),
}
SAYS = {"torn JSON": "a body that is not JSON", "an error page": "a body that is not JSON",
        "choices missing": "the reply has no 'choices'",
        "choices empty": "the reply's 'choices' is empty",
        "no content": "choices[0].message has no 'content'",
        "content a number": "choices[0].message.content is a int",
        "a list": "the reply is a list, not a JSON object",
        "audio not base64": "choices[0].message.audio.data is not base64",
        "audio not a WAV": "without a RIFF/WAVE header",
        "audio without transcript": "choices[0].message.audio has no 'transcript'"}
SPOKEN = dict(modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"})


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], RawServer]]:
    servers: list[RawServer] = []

    def start(answer: Answer) -> RawServer:
        servers.append(RawServer(answer))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry's backoff is the client's (0.5 s doubling); the tests need not wait it."""
    from benevaudit.llm import server_replies

    monkeypatch.setattr(server_replies.time, "sleep", lambda s: None)


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_malformed_reply_is_one_line_naming_the_url(case: str, serve, tmp_path) -> None:
    server = serve(lambda path, body, n: MALFORMED[case])
    options = SPOKEN if case.startswith("audio") else {}
    model = build_chat_model("openai", model="m", base_url=server.url, cache=tmp_path / "c",
                             max_retries=0, **options)
    with pytest.raises(ServerError) as err:
        model.chat(CONVS[:1], Sampling())
    message = str(err.value)
    assert message.startswith(f"{server.url}: chat failed after 0 retries (a malformed reply: ")
    assert SAYS[case] in message and "\n" not in message, message
    assert "upstream" not in message and "fine" not in message     # no reply text is quoted
    assert len(model.cache) == 0                                    # nothing malformed is kept


def test_a_malformed_reply_is_retried_and_counted(serve) -> None:
    server = serve(lambda path, body, n: MALFORMED["torn JSON"] if n == 1 else echo(path, body, n))
    model = build_chat_model("openai", model="m", base_url=server.url, max_retries=2)
    assert model.chat(CONVS[:1], Sampling())[0].text == "QUESTION 0?"
    assert len(server.bodies) == 2 and model.counts()["retries"] == 1


def test_the_answers_received_stay_cached_and_a_rerun_sends_only_the_rest(serve,
                                                                        tmp_path) -> None:
    """Two answered, then ``choices`` empty past the retries: those two are kept."""
    down = serve(lambda path, body, n: echo(path, body, n) if n <= 2
                 else MALFORMED["choices empty"])
    reset_request_counts()
    model = build_chat_model("openai", model="m", base_url=down.url, cache=tmp_path / "c",
                             concurrency=1, max_retries=1)
    with pytest.raises(ServerError) as err:
        model.chat(CONVS, Sampling())
    assert "2 requests to openai:m answered" in str(err.value)
    assert request_metrics()["llm/retries"] == 1 and request_metrics()["llm/failed"] == 2
    healthy = serve(echo)
    out = build_chat_model("openai", model="m", base_url=healthy.url,
                           cache=tmp_path / "c").chat(CONVS, Sampling())
    assert [o.text for o in out] == [c[0]["content"].upper() for c in CONVS]
    assert [o.cached for o in out] == [True, True, False, False]
    sent = sorted(b["messages"][0]["content"] for b in healthy.bodies)
    assert sent == ["Question 2?", "Question 3?"]


def test_content_null_is_an_empty_text_as_the_protocol_allows(serve) -> None:
    server = serve(lambda path, body, n: as_json({**completion(None), "usage": None}))
    reply = build_chat_model("openai", model="m", base_url=server.url).chat(CONVS[:1],
                                                                           Sampling())[0]
    assert (reply.text, reply.prompt_tokens, reply.finish_reason) == ("", 0, "stop")


def vllm(tokenize: Callable[[dict[str, Any]], Any], logprobs: Any) -> Answer:
    """A vLLM server's ``/tokenize`` and ``/v1/completions``, each reply given as JSON."""
    def answer(path: str, body: dict[str, Any], n: int) -> tuple[int, str, bytes]:
        return as_json(tokenize(body) if path == "/tokenize" else logprobs)
    return answer


def chat_tokens(body: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": [1, 2, 3] if "messages" in body else [7], "max_model_len": 64}


LOGPROBS = {"choices": [{"logprobs": {"top_logprobs": [{"token_id:7": -0.5}]}}]}


@pytest.mark.parametrize("tokenize, logprobs, says", [
    (lambda b: {"tokens": "1 2 3"}, LOGPROBS, "the /tokenize reply.tokens is a str"),
    (lambda b: {"tokens": [1]}, LOGPROBS, "the /tokenize reply has no 'max_model_len'"),
    (chat_tokens, {"choices": []}, "the reply's 'choices' is empty"),
    (chat_tokens, {"choices": [{"logprobs": {"top_logprobs": [{"7": -0.5}]}}]},
     "is not {'token_id:<id>': <log-probability>}"),
], ids=["tokens a string", "no max_model_len", "choices empty", "top_logprobs keys"])
def test_a_malformed_score_reply_is_one_line_naming_the_url(tokenize, logprobs, says, serve
                                                            ) -> None:
    server = serve(vllm(tokenize, logprobs))
    model = build_chat_model("openai", model="m", base_url=server.url, max_retries=0)
    with pytest.raises(ServerError) as err:
        model.score(CONVS[:1], ["yes"])
    assert str(err.value).startswith(f"{server.url}: score") and says in str(err.value)
    assert "\n" not in str(err.value)


def test_a_well_formed_score_reply_is_read(serve) -> None:
    server = serve(vllm(chat_tokens, LOGPROBS))
    rows = build_chat_model("openai", model="m", base_url=server.url).score(CONVS[:2], ["yes"])
    assert np.allclose(rows, [[-0.5], [-0.5]])
