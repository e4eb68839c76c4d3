"""Audio in, one form for every backend: the OpenAI ``input_audio`` message part.

A probe sends speech as ``{"type": "input_audio", "input_audio": {"data": <base64>, "format":
"wav"}}``. The ``openai`` backend passes it on; the in-process backends (``hf`` speech models,
``vllm``) decode it here with soundfile (libsndfile reads WAV, FLAC, OGG and more), average the
channels to mono, and resample it to the rate the model's feature extractor was trained at with
soxr (its high-quality setting). Replies in speech go back as WAV written by soundfile.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import soundfile
import soxr

from benevaudit.llm.base import Conversation

AUDIO_PART = "input_audio"


class Clip(NamedTuple):
    """Mono samples ``[T]`` (float32 in [-1, 1]) and their rate in Hz."""

    samples: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate


def has_audio(conversation: Conversation) -> bool:
    """Whether any message carries an ``input_audio`` part."""
    return any(isinstance(m["content"], list)
               and any(p.get("type") == AUDIO_PART for p in m["content"]) for m in conversation)


def decode(part: dict[str, Any], where: str) -> Clip:
    """The clip of one ``input_audio`` part; ``where`` names it in errors
    (``conversation 3, message 1``)."""
    body = part.get(AUDIO_PART) or {}
    try:
        data = base64.b64decode(str(body.get("data") or ""), validate=True)
    except binascii.Error:
        raise ValueError(f"{where}: input_audio.data is not base64") from None
    if not data:
        raise ValueError(f"{where}: input_audio.data is empty; expected base64 audio bytes")
    return read_clip(data, f"{where}: input_audio ({body.get('format')!r})")


def read_clip(data: bytes, what: str) -> Clip:
    """Mono samples of an audio file's bytes (any format libsndfile reads)."""
    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as err:
        raise ValueError(f"{what} is not audio soundfile can read: {err}") from None
    if not len(samples):
        raise ValueError(f"{what} holds no samples")
    return Clip(samples.mean(axis=1), int(rate))   # [T, channels] -> [T]


def resample(clip: Clip, rate: int) -> Clip:
    """The clip at ``rate`` Hz (soxr, high quality); unchanged when already there."""
    if clip.rate == rate:
        return clip
    out = soxr.resample(clip.samples, clip.rate, rate, quality="HQ")
    return Clip(np.asarray(out, dtype=np.float32), rate)


def encode_wav(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM WAV bytes of mono samples (a spoken reply, as the APIs return it)."""
    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(samples, dtype=np.float32).reshape(-1), rate,
                    format="WAV", subtype="PCM_16")
    return buffer.getvalue()


class SpeechPrompt(NamedTuple):
    """A conversation in the form transformers' processors take: audio parts become
    ``{"type": "audio"}`` placeholders, and ``clips`` holds their samples in order."""

    messages: list[dict[str, Any]]
    clips: list[Clip]


def speech_prompt(conversation: Conversation, rate: int, index: int = 0) -> SpeechPrompt:
    """Decode every audio part at the model's ``rate`` and keep the text parts; string
    contents pass through (Qwen's chat templates take both forms)."""
    messages: list[dict[str, Any]] = []
    clips: list[Clip] = []
    for j, message in enumerate(conversation):
        content: Any = message["content"]
        if isinstance(content, list):
            parts: list[dict[str, Any]] = []
            for part in content:
                if part.get("type") == AUDIO_PART:
                    clips.append(resample(decode(part, f"conversation {index}, message {j}"),
                                          rate))
                    parts.append({"type": "audio"})
                elif part.get("type") == "text":
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
                else:
                    raise ValueError(f"conversation {index}, message {j}: part type "
                                     f"{part.get('type')!r}; speech models take text and "
                                     "input_audio parts")
            content = parts
        messages.append({"role": message["role"], "content": content})
    return SpeechPrompt(messages, clips)


def check_seconds(prompts: Sequence[SpeechPrompt], limit: float, truncate: bool,
                  model_id: str, offset: int = 0) -> int:
    """How many clips exceed the feature extractor's window of ``limit`` seconds; an error
    unless ``truncate`` (the extractor then keeps the first ``limit`` seconds). ``offset``:
    the first prompt's index in the request, for the error."""
    long = [(offset + i, c.seconds) for i, p in enumerate(prompts) for c in p.clips
            if c.seconds > limit]
    if long and not truncate:
        i, seconds = long[0]
        raise ValueError(f"conversation {i}: audio of {seconds:.1f} s exceeds the {limit:.0f} s "
                         f"that {model_id} hears; shorten the stimulus or set "
                         "target.llm.truncate_audio=true to keep its first "
                         f"{limit:.0f} s")
    return len(long)
