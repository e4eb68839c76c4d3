"""One chat interface, four backends: ``hf``, ``vllm``, ``openai``, ``scripted``.

Backends are registered as ``"module:Class"`` strings and imported only when asked for, so
``import benevaudit.llm`` never pulls in torch, transformers or vllm.

    model = build_chat_model("hf", model="embedded:smollm2", cache="outputs/cache/llm.sqlite")
    replies = model.chat([[{"role": "user", "content": "Hi"}]], Sampling(max_tokens=16))
    logp = model.score(conversations, ["yes", "no"])   # [n_conversations, 2]
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from benevaudit.llm.base import ChatModel, Completion, Conversation, Message, Sampling

BACKENDS: dict[str, str] = {
    "hf": "benevaudit.llm.hf:HFChatModel",
    "vllm": "benevaudit.llm.vllm:VLLMChatModel",
    "openai": "benevaudit.llm.openai:OpenAIChatModel",
    "scripted": "benevaudit.llm.scripted:ScriptedChatModel",
}


def backend_class(backend: str) -> type[ChatModel]:
    """Import the class registered for ``backend`` (only now: vllm is heavy and optional)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown LLM backend {backend!r}; valid backends: {sorted(BACKENDS)}")
    module_name, class_name = BACKENDS[backend].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def build_chat_model(backend: str, cache: str | Path | None = None, **kwargs: Any) -> ChatModel:
    """Build a backend from plain keyword arguments (its constructor's), optionally cached.

    ``cache`` is the path of a SQLite request cache; with it, repeated requests are answered
    from disk with ``Completion.cached=True`` and an interrupted sweep resumes where it stopped.
    """
    model = backend_class(backend)(**kwargs)
    if cache is None:
        return model
    from benevaudit.llm.cache import CachedChatModel

    return CachedChatModel(model, cache)


__all__ = ["BACKENDS", "ChatModel", "Completion", "Conversation", "Message", "Sampling",
           "backend_class", "build_chat_model"]
