"""The backends by name, each imported only when asked for (vllm is heavy and optional), and
the keys of an ``llm`` block that a backend's constructor takes.

``BACKENDS`` is a :class:`benevaudit.registry.Registry`: each backend registers its block's
spec and its chat model together (``BACKENDS.add("hf", HFSpec, "benevaudit.llm.hf:HFChatModel")``,
in ``llm/backend_specs.py`` for the shipped ones), so a new backend is one module that does the
same and one ``conf/llm/`` YAML."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.llm.base import ChatModel
from benevaudit.registry import Registry, resolve

# backend -> its chat model class; the shipped backends register in llm/backend_specs.py
BACKENDS: Registry[type[ChatModel]] = Registry("LLM backend", tag="backend")
# ``audio_in: true`` on these backends loads a speech model (Qwen2.5-Omni, Qwen2-Audio) instead
SPEECH_BACKENDS: dict[str, str] = {"hf": "benevaudit.llm.hf_speech:HFSpeechChatModel"}


def backend_class(backend: str, audio_in: bool = False) -> type[ChatModel]:
    """Import the class registered for ``backend`` (only now: vllm is heavy and optional);
    ``audio_in``: its speech model, where the backend has a separate one."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown LLM backend {backend!r}; valid backends: {sorted(BACKENDS)}")
    if audio_in and backend in SPEECH_BACKENDS:
        speech: type[ChatModel] = resolve(SPEECH_BACKENDS[backend])
        return speech
    return BACKENDS[backend]


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
