"""One chat interface, four backends: ``hf``, ``vllm``, ``openai``, ``scripted``.

Backends are registered as ``"module:Class"`` strings and imported only when asked for, so
``import benevaudit.llm`` never pulls in torch, transformers or vllm.

    model = build_chat_model("hf", model="embedded:smollm2", cache="outputs/cache/llm.sqlite")
    replies = model.chat([[{"role": "user", "content": "Hi"}]], Sampling(max_tokens=16))
    logp = model.score(conversations, ["yes", "no"])   # [n_conversations, 2]

Room ``llm`` (layer 1) may import only the core (``schema``, ``errors``, ``files``, …);
every family above it builds its models through here.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.files import check_llm_files, check_sqlite
from benevaudit.llm import dry_run
from benevaudit.llm.base import ChatModel, Completion, Conversation, Message, Sampling
from benevaudit.llm.cache import CachedChatModel

BACKENDS: dict[str, str] = {
    "hf": "benevaudit.llm.hf:HFChatModel",
    "vllm": "benevaudit.llm.vllm:VLLMChatModel",
    "openai": "benevaudit.llm.openai:OpenAIChatModel",
    "scripted": "benevaudit.llm.scripted:ScriptedChatModel",
}
# ``audio_in: true`` on these backends loads a speech model (Qwen2.5-Omni, Qwen2-Audio) instead
SPEECH_BACKENDS: dict[str, str] = {"hf": "benevaudit.llm.hf_speech:HFSpeechChatModel"}


def backend_class(backend: str, audio_in: bool = False) -> type[ChatModel]:
    """Import the class registered for ``backend`` (only now: vllm is heavy and optional);
    ``audio_in``: its speech model, where the backend has a separate one."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown LLM backend {backend!r}; valid backends: {sorted(BACKENDS)}")
    registry = SPEECH_BACKENDS if audio_in and backend in SPEECH_BACKENDS else BACKENDS
    module_name, class_name = registry[backend].split(":")
    return getattr(importlib.import_module(module_name), class_name)


_BUILT: list[CachedChatModel] = []


def build_chat_model(backend: str, cache: str | Path | None = None, audio_in: bool = False,
                     **kwargs: Any) -> ChatModel:
    """Build a backend from plain keyword arguments (its constructor's), cached and counted.

    ``cache`` is the request cache's directory (``llm/cache.py``; None: none); with it,
    repeated requests are answered from disk with ``Completion.cached=True`` and an interrupted
    sweep resumes where it stopped. Every model counts its requests for ``request_metrics``.
    """
    model = CachedChatModel(backend_class(backend, audio_in)(**kwargs), cache)
    _BUILT.append(model)
    return model


def reset_request_counts() -> None:
    """Forget the models built so far: a run's counts start from zero (one multirun job)."""
    _BUILT.clear()


def request_metrics() -> dict[str, float]:
    """``llm/requests_sent``, ``llm/cache_hits``, ``llm/retries``, ``llm/failed`` over the
    models built since the run began and, where they are several distinct backend blocks, the
    same per block as ``llm/<backend>:<model>/<count>``."""
    blocks: dict[str, dict[str, float]] = {}
    for model in _BUILT:
        label = f"{model.name}:{Path(str(model.model_id)).name or model.model_id}"
        block = blocks.setdefault(label, {})
        for name, value in model.counts().items():
            block[name] = block.get(name, 0.0) + value
    out: dict[str, float] = {}
    for label, counts in blocks.items():
        for name, value in counts.items():
            out[f"llm/{name}"] = out.get(f"llm/{name}", 0.0) + value
            if len(blocks) > 1:
                out[f"llm/{label}/{name}"] = value
    return out


def backend_kwargs(backend: str, block: dict[str, Any], audio_in: bool = False
                   ) -> dict[str, Any]:
    """The keys of an ``llm`` block that ``backend``'s constructor takes; the rest are dropped.

    One config block serves every backend (``detector.llm.backend=hf`` on a block written for
    vLLM), so a key such as ``gpu_memory_utilization`` must not reach a constructor that has no
    such parameter. A backend that accepts ``**kwargs`` (vLLM's engine arguments) keeps them all.
    """
    params = inspect.signature(backend_class(backend, audio_in).__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(block)
    kept = {k: v for k, v in block.items() if k in params}
    dropped = sorted(set(block) - set(kept))
    if dropped:
        logging.getLogger(__name__).debug("llm backend %s takes no %s; dropped", backend, dropped)
    return kept


def build_from_block(block: dict[str, Any], cache: str | Path | None = None) -> ChatModel:
    """Build the model an ``llm`` config block names: ``{backend: hf, model: ..., ...}``.

    The block's ``cache`` key, where it has one, is its SQLite request cache (null: none) and
    takes the place of ``cache``; a block without the key is cached at ``cache``.

    During a dry run (``llm.dry_run.recording``) every block gets a recording model instead:
    no weights are loaded and no request is sent or answered from the cache.
    """
    block = dict(block)
    if "backend" not in block:
        raise ConfigError(f"an llm block needs a 'backend' (one of {sorted(BACKENDS)}); "
                          f"got keys {sorted(block)}")
    if dry_run.active() is not None:
        if block["backend"] not in BACKENDS:
            raise ConfigError(f"unknown LLM backend {block['backend']!r}; valid backends: "
                              f"{sorted(BACKENDS)}")
        return dry_run.model_for_block(block)
    backend = block.pop("backend")
    if "cache" in block:   # the block's own request cache: a path, or null for none
        cache = block.pop("cache")
    audio_in = speech_flags(backend, block)
    return build_chat_model(backend, cache=cache, audio_in=audio_in,
                            **backend_kwargs(backend, block, audio_in))


def speech_flags(backend: str, block: dict[str, Any]) -> bool:
    """Take ``audio_in`` out of the block (it picks the class) and check ``audio_out``: only
    the hf speech models and the openai backend answer in speech; vLLM's engine returns text
    (its Qwen2.5-Omni runs the thinker alone), and engine arguments must not receive either."""
    audio_in = bool(block.pop("audio_in", False))
    if backend == "vllm" and block.pop("audio_out", False):
        raise ConfigError("llm.audio_out=true: the vllm backend returns text only; run the "
                          "speaking model on hf (llm.backend=hf) or behind an openai server")
    if backend == "hf" and block.get("audio_out") and not audio_in:
        raise ConfigError("llm.audio_out=true on hf needs llm.audio_in=true (a speech model)")
    return audio_in


def check_llm_block(block: dict[str, Any], key: str) -> None:
    """Backend name, a local model directory or an offline hub cache entry, a template file."""
    if block.get("backend") not in BACKENDS:
        raise ConfigError(f"{key}.backend={block.get('backend')!r}: expected one of "
                          f"{sorted(BACKENDS)}")
    model = str(block.get("model") or "")
    local = model.startswith(("/", "./", "../", "~"))
    if local and not Path(model).expanduser().is_dir():
        raise ConfigError(f"{key}.model={model}: no such directory (expected a model directory "
                          "with config.json, weights and tokenizer files)")
    if (block["backend"] == "hf" and not local and "/" in model
            and os.environ.get("HF_HUB_OFFLINE") == "1"):
        from huggingface_hub import try_to_load_from_cache   # transformers' hub client, heavy

        if not isinstance(try_to_load_from_cache(model, "config.json"), str):
            raise ConfigError(f"{key}.model={model}: not in the Hugging Face cache, and "
                              "HF_HUB_OFFLINE=1 (expected a cached hub id, a local directory, "
                              "or embedded:smollm2)")
    template = block.get("chat_template")
    if template and "{" not in str(template) and not Path(str(template)).is_file():
        raise ConfigError(f"{key}.chat_template={template}: no such template file (expected "
                          "a .jinja file or an inline Jinja string)")
    check_llm_files(block, key)
    if block.get("cache"):
        check_sqlite(block["cache"], f"{key}.cache")


__all__ = ["request_metrics", "reset_request_counts", "backend_kwargs", "build_from_block", "BACKENDS",
           "SPEECH_BACKENDS", "speech_flags", "ChatModel", "Completion", "Conversation", "Message", "Sampling",
           "backend_class", "build_chat_model", "check_llm_block"]
