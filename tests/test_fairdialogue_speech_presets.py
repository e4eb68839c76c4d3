"""The study's API speech targets as presets, and the paper pin's audio and text sweep."""

from __future__ import annotations

from typing import Any

from omegaconf import OmegaConf
from recipe_fixtures import jobs


def target(name: str) -> dict[str, Any]:
    (cfg,) = jobs(["probe.py", f"target={name}"])
    return OmegaConf.to_container(cfg.target, resolve=False)  # type: ignore[return-value]


def test_gpt4o_audio_asks_for_text_and_a_wav_reply_through_the_openai_backend():
    llm = target("gpt4o_audio")["llm"]
    assert llm["backend"] == "openai" and llm["model"] == "gpt-4o-audio-preview"
    assert llm["modalities"] == ["text", "audio"]
    assert llm["audio"] == {"voice": "alloy", "format": "wav"}


def test_gemini_goes_through_its_openai_compatible_endpoint():
    llm = target("gemini_25_flash_lite")["llm"]
    assert llm["backend"] == "openai" and llm["model"] == "gemini-2.5-flash-lite"
    assert llm["base_url"] == "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert llm["api_key_env"] == "GEMINI_API_KEY"


def test_the_paper_pin_hears_and_reads_each_model_greedily():
    runs = jobs(["probe.py", "-m", "experiment=fairdialogue_paper",
                 "target=gpt4o_audio,gemini_25_flash_lite"])
    assert len(runs) == 8           # 2 probes × 2 models × {audio, text}
    assert {(r.target.name, r.probe.mode) for r in runs} == {
        (t, m) for t in ("gpt4o_audio", "gemini_25_flash_lite") for m in ("audio", "text")}
    assert {r.probe.sampling.temperature for r in runs} == {0.0}
    assert {r.probe.audio.source for r in runs} == {"espeak"}


def resolved(name: str, *overrides: str) -> dict[str, Any]:
    (cfg,) = jobs(["probe.py", f"target={name}", *overrides])
    return OmegaConf.to_container(cfg.target, resolve=True)  # type: ignore[return-value]


def test_target_audio_out_switches_each_presets_spoken_reply(monkeypatch):
    """``target.audio_out`` is the presets' switch; the llm block the backend reads follows
    it, and a backend that cannot speak says so in one line."""
    import pytest

    from benevaudit.errors import ConfigError
    from benevaudit.llm import build_from_block

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("GEMINI_API_KEY", "test")
    assert resolved("qwen25_omni_7b")["llm"]["audio_out"] is False
    assert resolved("qwen25_omni_7b", "target.audio_out=true")["llm"]["audio_out"] is True
    spoken = build_from_block({**resolved("gpt4o_audio")["llm"], "cache": None}).model
    assert spoken.request_options() == {"modalities": ["text", "audio"],
                                        "audio": {"voice": "alloy", "format": "wav"},
                                        "spoken_cap": 12}   # the cap sent, in the cache key
    text = build_from_block({**resolved("gpt4o_audio", "target.audio_out=false")["llm"],
                             "cache": None}).model
    assert text.request_options() == {}
    with pytest.raises(ConfigError, match="^llm.audio_out=true on the openai backend needs"):
        build_from_block({**resolved("gemini_25_flash_lite", "target.audio_out=true")["llm"],
                          "cache": None})
    with pytest.raises(ConfigError, match="the vllm backend returns text only"):
        build_from_block(resolved("qwen2_audio_7b_vllm", "target.audio_out=true")["llm"])


def test_the_paper_pin_transcribes_with_whisper_and_lets_each_speaking_model_speak(monkeypatch):
    """asr=whisper_large_v3 for every job; target.audio_out follows the chosen target option:
    Qwen2.5-Omni's talker on hf and GPT-4o Audio speak, the text-only endpoints do not."""
    from hydra import compose, initialize_config_dir
    from hydra.core.hydra_config import HydraConfig

    from config_fixtures import CONF

    runs = jobs(["probe.py", "-m", "experiment=fairdialogue_paper"])
    assert len(runs) == 16 and {r.asr.name for r in runs} == {"whisper_large_v3"}
    speaks = {}
    hydra = HydraConfig.instance()     # the pin reads ${hydra:runtime.choices.target}
    monkeypatch.setattr(hydra, "cfg", None)     # restored after: no Hydra app in later tests
    with initialize_config_dir(str(CONF), version_base="1.3"):
        for option in ("qwen25_omni_7b", "gpt4o_audio", "gemini_25_flash_lite",
                       "qwen2_audio_7b", "qwen25_omni_7b_vllm", "vllm_llama31_8b"):
            cfg = compose("probe", overrides=["experiment=fairdialogue_paper",
                                              f"target={option}"], return_hydra_config=True)
            hydra.set_config(cfg)
            speaks[option] = (cfg.target.audio_out, cfg.target.llm.get("audio_out"))
        cfg = compose("probe", overrides=["experiment=fairdialogue_paper", "target=qwen25_omni_7b",
                                          "target.audio_out=false"], return_hydra_config=True)
        hydra.set_config(cfg)
        assert cfg.target.llm.audio_out is False          # the command line replaces the pin
    assert speaks == {"qwen25_omni_7b": (True, True), "gpt4o_audio": (True, True),
                      "gemini_25_flash_lite": (False, False), "qwen2_audio_7b": (False, False),
                      "qwen25_omni_7b_vllm": (False, False), "vllm_llama31_8b": (False, None)}
