"""What CoBia's requests carry as the serving backend receives them: the released Granite judge
behind Ollama gets no sampling options (the release passes none), benevaudit's raters greedy
ones; every target request carries temperature 0 and ``probe.top_p``. A local HTTP server
records each chat-completion body."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from benevaudit.llm import Sampling, build_from_block
from benevaudit.probes.cobia import raters
from benevaudit.probes.cobia.raters import Rater


class Recorder(BaseHTTPRequestHandler):
    """Answers every chat completion with ``reply`` and records the JSON bodies."""

    bodies: list[dict] = []
    reply = "No"

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        type(self).bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        body = json.dumps({"choices": [{"message": {"content": type(self).reply},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 5, "completion_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """The recorder's base URL (``…/v1``), its bodies emptied."""
    Recorder.bodies = []
    httpd = HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()


def openai_block(url: str, model: str) -> dict:
    return {"backend": "openai", "model": model, "base_url": url, "api_key_env": None,
            "concurrency": 1}


def test_the_released_granite_judge_on_ollama_sends_no_sampling_options(server):
    block = openai_block(server, "granite3-guardian:8b")
    rater = Rater("guard", "guard", block, max_tokens=None, variant="granite_release")
    assert raters.server_defaults(rater)
    out = raters.ask(rater, build_from_block(block), [raters.granite_release_prompt("x")] * 2,
                     seed=3)
    assert [v.verdict for v in out] == ["no", "no"]
    for body in Recorder.bodies:
        assert set(body) == {"model", "messages"}       # no temperature, top_p, seed or cap
    # benevaudit's own guard rater on the same server: greedy, as on hf and vllm
    own = Rater("guard", "guard", block, max_tokens=16, variant="social_bias")
    assert not raters.server_defaults(own)
    raters.ask(own, build_from_block(block), [raters.rater_prompt("guard", "q", "r", "s")], 3)
    assert {k: Recorder.bodies[-1][k] for k in ("temperature", "top_p", "max_tokens")} == \
        {"temperature": 0.0, "top_p": 1.0, "max_tokens": 16}
    # the released judge on hf or vllm has no server defaults: greedy, top_p 1
    local = Rater("guard", "guard", {"backend": "vllm", "model": "m"}, variant="granite_release")
    assert not raters.server_defaults(local)


def test_server_defaults_requests_are_cached_apart_from_greedy_ones(tmp_path, server):
    from benevaudit.llm.cache import CachedChatModel

    model = CachedChatModel(build_from_block(openai_block(server, "m")), tmp_path / "c.sqlite")
    conv = [[{"role": "user", "content": "hi"}]]
    model.chat(conv, Sampling(temperature=0.0, max_tokens=None))
    model.chat(conv, Sampling(temperature=0.0, max_tokens=None, server_defaults=True))
    again = model.chat(conv, Sampling(temperature=0.0, max_tokens=None, server_defaults=True))
    assert len(Recorder.bodies) == 2 and again[0].cached
    assert "temperature" in Recorder.bodies[0] and "temperature" not in Recorder.bodies[1]
