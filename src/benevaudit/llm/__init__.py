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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.llm import dry_run
from benevaudit.llm.base import ChatModel, Completion, Conversation, Message, Sampling
from benevaudit.llm.cache import CachedChatModel
from benevaudit.llm.registry import BACKENDS, SPEECH_BACKENDS, backend_class, backend_kwargs
from benevaudit.llm.backend_specs import LLMSpec, llm_spec

_BUILT: list[CachedChatModel] = []


def build_chat_model(backend: str, cache: str | Path | None = None, audio_in: bool = False,
                     **kwargs: Any) -> ChatModel:
    """Build a backend from plain keyword arguments (its constructor's), cached and counted.

    ``cache`` is the request cache's directory (``llm/cache.py``; None: none); with it,
    repeated requests are answered from disk with ``Completion.cached=True`` and an interrupted
    sweep resumes where it stopped. Every model counts its requests for ``request_metrics``.
    """
    model = CachedChatModel(backend_class(backend, audio_in)(**kwargs), cache, _run_answered)
    _BUILT.append(model)
    return model


def _run_answered() -> int:
    """Requests answered over every model built since the run began (target, judges, ...)."""
    return sum(model.answered() for model in _BUILT)


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
        tally = blocks.setdefault(label, {})
        for name, value in model.counts().items():
            tally[name] = tally.get(name, 0.0) + value
    out: dict[str, float] = {}
    for label, counts in blocks.items():
        for name, value in counts.items():
            out[f"llm/{name}"] = out.get(f"llm/{name}", 0.0) + value
            if len(blocks) > 1:
                out[f"llm/{label}/{name}"] = value
    return out


def build_from_block(block: LLMSpec | Mapping[str, Any],
                     cache: str | Path | None = None) -> ChatModel:
    """Build the model an ``llm`` block names (an :data:`LLMSpec`, or the same keys as a
    mapping, validated here): ``{backend: hf, model: ..., ...}``.

    The block's ``cache`` key, where it sets one, is its request cache (null: none) and takes
    the place of ``cache``; a block without the key is cached at ``cache``. Keys the block
    leaves unset keep the backend's own defaults.

    During a dry run (``llm.dry_run.recording``) every block gets a recording model instead:
    no weights are loaded and no request is sent or answered from the cache.
    """
    spec = llm_spec(block)
    if spec.backend is None:
        raise ConfigError(f"an llm block needs a 'backend' (one of {sorted(BACKENDS)}); "
                          f"got keys {sorted(spec.model_fields_set)}")
    if dry_run.active() is not None:   # recorded as sent: a card's system prompt included
        system = spec.system()
        return dry_run.DryRunChatModel(spec.model or "dry_run", spec.template(), spec.backend,
                                       frame=system.frame if system else list)
    spec.check_speech()
    if "cache" in spec.model_fields_set:   # the block's own request cache, or null for none
        cache = spec.cache
    audio_in = bool(spec.audio_in)
    # hf's text and speech models take different keys of its block
    return build_chat_model(spec.backend, cache=cache, audio_in=audio_in,
                            **backend_kwargs(spec.backend, spec.constructor_kwargs(), audio_in))


__all__ = ["request_metrics", "reset_request_counts", "backend_kwargs", "build_from_block",
           "BACKENDS", "SPEECH_BACKENDS", "ChatModel", "Completion", "Conversation", "LLMSpec",
           "Message", "Sampling", "backend_class", "build_chat_model", "llm_spec"]
