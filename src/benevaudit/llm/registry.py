"""The backends by name, each imported only when asked for (vllm is heavy and optional), and
the keys of an ``llm`` block that a backend's constructor takes."""

from __future__ import annotations

import importlib
import inspect
import logging
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.llm.base import ChatModel

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


def backend_kwargs(backend: str, block: dict[str, Any], audio_in: bool = False
                   ) -> dict[str, Any]:
    """The keys of an ``llm`` block that ``backend``'s constructor takes; the rest are dropped.

    A block holds its backend's keys only (``llm/backend_specs.py``), but one backend may have
    two constructors: hf's text model takes ``prefix_reuse``, its speech model (``audio_in``)
    ``speaker``. A backend that accepts ``**kwargs`` (vLLM's engine arguments) keeps them all.
    """
    params = inspect.signature(backend_class(backend, audio_in).__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(block)
    kept = {k: v for k, v in block.items() if k in params}
    dropped = sorted(set(block) - set(kept))
    if dropped:
        logging.getLogger(__name__).debug("llm backend %s takes no %s; dropped", backend, dropped)
    return kept
