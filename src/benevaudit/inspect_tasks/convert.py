"""benevaudit's messages and decoding in Inspect's terms, and back.

A benevaudit conversation is a list of ``{role, content}`` messages (content a string, or parts
where audio is sent); Inspect's is a list of ``ChatMessage``. Decoding is benevaudit's
:class:`~benevaudit.llm.Sampling`, as Inspect's ``GenerateConfig`` (temperature, top_p,
max_tokens, seed). ``input_audio`` parts (base64 WAV) become Inspect's ``ContentAudio``, so a
spoken stimulus reaches a provider that takes audio. Each request carries its own seed, derived
from its messages and the run's seed (``request_seed``), as benevaudit's backends send it, so a
sampled reply does not depend on the batch or the order it was asked in.
"""

from __future__ import annotations

import json
from typing import Any

from benevaudit.llm import Conversation, Sampling
from benevaudit.llm.base import request_seed


def audio_content(part: dict[str, Any]) -> Any:
    """An ``input_audio`` part as Inspect's ``ContentAudio`` (a data URL of its bytes)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai._util.content import ContentAudio

    audio = part["input_audio"]
    return ContentAudio(audio=f"data:audio/{audio['format']};base64,{audio['data']}",
                        format=audio["format"])


def content_of(content: Any) -> Any:
    """A message's content: a string as it is, parts as Inspect content."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai._util.content import ContentText

    if isinstance(content, str):
        return content
    return [audio_content(p) if p.get("type") == "input_audio" else ContentText(text=p["text"])
            for p in content]


def chat_messages(conversation: Conversation) -> list[Any]:
    """A benevaudit conversation as Inspect chat messages."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser,
             "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=content_of(m["content"])) for m in conversation]


def generate_config(sampling: Sampling) -> Any:
    """The decoding of ``sampling`` as Inspect's ``GenerateConfig``; ``server_defaults`` sends
    none of temperature, top_p or seed, as benevaudit's openai backend does."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.model import GenerateConfig

    if sampling.server_defaults:
        return GenerateConfig(max_tokens=sampling.max_tokens)
    return GenerateConfig(temperature=sampling.temperature, top_p=sampling.top_p,
                          max_tokens=sampling.max_tokens, seed=sampling.seed,
                          stop_seqs=list(sampling.stop) or None)


def seed_of(sampling: Sampling, messages: list[Any]) -> dict[str, int]:
    """The request's own seed as a ``generate`` option (none under ``server_defaults``)."""
    if sampling.server_defaults:
        return {}
    return {"seed": request_seed(plain(messages), sampling.seed)}


def request_config(sampling: Sampling, messages: list[Any]) -> Any:
    """``generate_config(sampling)`` with the request's own seed (a grader's call)."""
    return generate_config(sampling).merge(seed_of(sampling, messages))


def seeded_generate(sampling: Sampling) -> Any:
    """The solver: one reply to the sample's messages, with the request's own seed."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.solver import solver

    @solver(name="benevaudit/generate")
    def generate_solver() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            return await generate(state, **seed_of(sampling, state.messages))
        return solve
    return generate_solver()


def part_of(content: Any) -> dict[str, Any]:
    """Inspect content as benevaudit's part: audio as ``input_audio`` (base64 and format)."""
    if content.type == "audio":
        return {"type": "input_audio", "input_audio": {
            "data": content.audio.split(";base64,", 1)[-1], "format": content.format}}
    return {"type": "text", "text": content.text}


def plain(messages: list[Any]) -> list[dict[str, Any]]:
    """Inspect chat messages as benevaudit's ``{role, content}``: text content as a string,
    content with audio as parts (so a spoken request's seed is benevaudit's for it)."""
    def content(m: Any) -> Any:
        if isinstance(m.content, str):
            return m.content
        if any(c.type == "audio" for c in m.content):
            return [part_of(c) for c in m.content]
        return m.text

    return [{"role": m.role, "content": content(m)} for m in messages]


def metadata_json(value: Any) -> str:
    """A value kept in a sample's metadata as JSON (Inspect logs keep plain values)."""
    return json.dumps(value, ensure_ascii=False)
