"""The ``openai`` backend through the official client, against a local stdlib HTTP server that
answers with the reply shapes the ``openai`` library defines: audio replies, request options,
429 with Retry-After, a hanging server, a server that stays down, and the counts of a run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from benevaudit.errors import ServerError
from benevaudit.llm import Sampling, build_chat_model, request_metrics, reset_request_counts

CONVS = [[{"role": "user", "content": f"Question {i}?"}] for i in range(6)]
WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"  # 8 frames


def completion(content: str, audio: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``ChatCompletion`` as the openai library's types define it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if audio is not None:
        message["audio"] = audio
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message,
                         "logprobs": None}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


class Server:
    """A threading HTTP server; ``answer(body, call_number)`` returns (status, headers, json)
    or sleeps to hang. Records every request body."""

    def __init__(self, answer: Callable[[dict[str, Any], int], tuple[int, dict[str, str], Any]]
                 ) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.bodies.append(body)
                    n = len(outer.bodies)
                status, headers, reply = answer(body, n)
                data = json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    for k, v in {**headers, "Content-Type": "application/json",
                                 "Content-Length": str(len(data))}.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # the client gave up on a hanging request

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(answer: Callable[[dict[str, Any], int], tuple[int, dict[str, str], Any]]
              ) -> Server:
        servers.append(Server(answer))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def echo(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
    return 200, {}, completion(body["messages"][-1]["content"].upper())


def test_audio_reply_fills_audio_and_transcript_and_options_are_sent(serve, tmp_path) -> None:
    server = serve(lambda body, n: (200, {}, completion("", {
        "id": "audio_1", "data": WAV, "expires_at": 1700000000, "transcript": "Yes, you can."})))
    options = dict(modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"})
    model = build_chat_model("openai", model="gpt-4o-audio-preview", base_url=server.url,
                             cache=tmp_path / "cache", **options)
    reply = model.chat(CONVS[:1], Sampling())[0]
    assert reply.audio == WAV and reply.transcript == "Yes, you can." and reply.text == ""
    assert server.bodies[0]["modalities"] == ["text", "audio"]
    assert server.bodies[0]["audio"] == {"voice": "alloy", "format": "wav"}
    again = build_chat_model("openai", model="gpt-4o-audio-preview", base_url=server.url,
                             cache=tmp_path / "cache", **options).chat(CONVS[:1], Sampling())[0]
    assert again.cached and again.audio == WAV and again.transcript == "Yes, you can."
    text_only = build_chat_model("openai", model="gpt-4o-audio-preview", base_url=server.url,
                                 cache=tmp_path / "cache")
    assert not text_only.chat(CONVS[:1], Sampling())[0].cached   # the options are in the key
    assert len(server.bodies) == 2


def test_extra_body_reaches_the_server(serve) -> None:
    server = serve(echo)
    model = build_chat_model("openai", model="m", base_url=server.url,
                             extra_body={"top_k": 5, "repetition_penalty": 1.1})
    assert model.chat(CONVS[:1], Sampling())[0].text == "QUESTION 0?"
    assert server.bodies[0]["top_k"] == 5 and server.bodies[0]["repetition_penalty"] == 1.1


def test_429_with_retry_after_is_waited_for(serve) -> None:
    server = serve(lambda body, n: (429, {"Retry-After": "1"}, {"error": {"message": "slow"}})
                   if n == 1 else echo(body, n))
    model = build_chat_model("openai", model="m", base_url=server.url, max_retries=2)
    start = time.monotonic()
    out = model.chat(CONVS[:1], Sampling())
    assert time.monotonic() - start >= 1.0      # waited as the header says
    assert out[0].text == "QUESTION 0?" and model.counts()["retries"] == 1


def test_a_hanging_server_times_out_and_is_retried(serve) -> None:
    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
        if n == 1:
            time.sleep(3)      # longer than the client's timeout
        return echo(body, n)

    server = serve(answer)
    model = build_chat_model("openai", model="m", base_url=server.url, timeout=0.5,
                             max_retries=2)
    start = time.monotonic()
    assert model.chat(CONVS[:1], Sampling())[0].text == "QUESTION 0?"
    assert time.monotonic() - start < 2.5 and len(server.bodies) == 2
    assert model.counts()["retries"] == 1


def test_a_server_that_stays_down_names_its_url_and_a_rerun_sends_only_the_rest(
        serve, tmp_path) -> None:
    """The first 3 requests are answered, then the server fails every request: the call ends
    with one error naming the URL and the count done; those 3 are cached and a rerun against a
    healthy server sends only the other 3."""
    down = serve(lambda body, n: echo(body, n) if n <= 3 else (500, {}, {"error": {}}))
    reset_request_counts()
    model = build_chat_model("openai", model="m", base_url=down.url, cache=tmp_path / "c",
                             concurrency=1, max_retries=1)
    with pytest.raises(ServerError) as err:
        model.chat(CONVS, Sampling())
    message = str(err.value)
    assert down.url in message and "3 requests to openai:m answered (3 over all" in message
    assert "kept in the request cache" in message
    assert "\n" not in message
    counts = request_metrics()
    assert counts["llm/failed"] == 3 and counts["llm/requests_sent"] == 6
    assert counts["llm/retries"] == 1
    healthy = serve(echo)
    reset_request_counts()
    rerun = build_chat_model("openai", model="m", base_url=healthy.url, cache=tmp_path / "c")
    out = rerun.chat(CONVS, Sampling())
    assert [o.text for o in out] == [c[0]["content"].upper() for c in CONVS]
    assert sorted(b["messages"][0]["content"] for b in healthy.bodies) == \
        [f"Question {i}?" for i in range(3, 6)]
    assert request_metrics() == {"llm/requests_sent": 3.0, "llm/cache_hits": 3.0,
                                 "llm/retries": 0.0, "llm/failed": 0.0}


def test_concurrency_is_bounded(serve) -> None:
    inflight, peak = [0], [0]
    lock = threading.Lock()

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
        with lock:
            inflight[0] += 1
            peak[0] = max(peak[0], inflight[0])
        time.sleep(0.1)
        with lock:
            inflight[0] -= 1
        return echo(body, n)

    server = serve(answer)
    build_chat_model("openai", model="m", base_url=server.url, concurrency=2).chat(
        CONVS, Sampling())
    assert peak[0] == 2


def test_counts_per_block_where_a_run_has_several(serve, tmp_path) -> None:
    server = serve(echo)
    reset_request_counts()
    build_chat_model("openai", model="target", base_url=server.url).chat(CONVS[:2], Sampling())
    build_chat_model("scripted", model="judge").chat(CONVS, Sampling())
    counts = request_metrics()
    assert counts["llm/requests_sent"] == 8
    assert counts["llm/openai:target/requests_sent"] == 2
    assert counts["llm/scripted:judge/requests_sent"] == 6


def test_gpt4o_audio_caps_in_max_completion_tokens_with_room_for_the_speech(serve,
                                                                            monkeypatch) -> None:
    """The preset sends the API's ``max_completion_tokens``, never the deprecated
    ``max_tokens``; a spoken reply's cap is 12 completion tokens a text token (20 audio tokens
    a second of speech), a text reply's the cap itself. Other servers keep ``max_tokens``."""
    from omegaconf import OmegaConf

    from benevaudit.llm import build_from_block
    from recipe_fixtures import jobs

    server = serve(lambda body, n: (200, {}, completion("", {
        "id": "audio_1", "data": WAV, "expires_at": 1700000000, "transcript": "Yes."})))
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    for audio_out, cap in ((True, 32 * 12), (False, 32)):
        (cfg,) = jobs(["probe.py", "target=gpt4o_audio", f"target.audio_out={audio_out}"])
        block: Any = OmegaConf.to_container(cfg.target.llm, resolve=True)
        model = build_from_block({**block, "base_url": server.url, "cache": None})
        model.chat(CONVS[:1], Sampling(max_tokens=32))
        assert server.bodies[-1]["max_completion_tokens"] == cap
        assert "max_tokens" not in server.bodies[-1]
    build_chat_model("openai", model="m", base_url=server.url).chat(CONVS[:1],
                                                                    Sampling(max_tokens=32))
    assert server.bodies[-1]["max_tokens"] == 32 and "max_completion_tokens" not in \
        server.bodies[-1]
    build_chat_model("openai", model="m", base_url=server.url, spoken_cap_factor=3,
                     modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"}
                     ).chat(CONVS[:1], Sampling(max_tokens=32))
    assert server.bodies[-1]["max_tokens"] == 96
    build_chat_model("openai", model="m", base_url=server.url).chat(CONVS[:1],
                                                                    Sampling(max_tokens=None))
    assert not {"max_tokens", "max_completion_tokens"} & set(server.bodies[-1])
    with pytest.raises(ValueError, match="max_tokens_field='max_new_tokens': expected one of"):
        build_chat_model("openai", model="m", base_url=server.url,
                         max_tokens_field="max_new_tokens")


def test_a_cards_system_prompt_reaches_the_server_and_the_cache_key(serve, tmp_path) -> None:
    server = serve(echo)
    study = [{"role": "system", "content": "Answer briefly."}, *CONVS[0]]
    card = dict(system_prompt="The card's prompt.", system_turn="user_turn")
    model = build_chat_model("openai", model="m", base_url=server.url, cache=tmp_path / "c",
                             **card)
    assert model.chat([study], Sampling())[0].text == "QUESTION 0?"
    assert server.bodies[0]["messages"] == [
        {"role": "system", "content": "The card's prompt."},
        {"role": "user", "content": "Answer briefly."},
        {"role": "assistant", "content": "Sure, I got it."}, *CONVS[0]]
    plain = build_chat_model("openai", model="m", base_url=server.url, cache=tmp_path / "c")
    assert not plain.chat([study], Sampling())[0].cached     # the prompt is in the key
    assert server.bodies[1]["messages"] == study
