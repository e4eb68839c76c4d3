"""A dry run's view of audio input: each ``input_audio`` part as its stimulus, never its bytes.

``requests.jsonl`` names each part's stimulus file (``path``, registered by the probe that made
it), its ``seconds``, ``sample_rate`` and ``sha256``; each request adds ``audio_seconds`` and,
where the model's audio token rate is published, ``audio_tokens`` (an estimate from that
rate), so an audio sweep can be sized before it is sent. Rates, and where they come from:

- Qwen2-Audio and Qwen2.5-Omni: Whisper features at 100 frames a second (16 kHz, hop 160),
  halved by the encoder's stride-2 convolution and again by its pooling: 25 tokens a second
  (``_get_feat_extract_output_lengths`` in transformers' ``processing_qwen2_5_omni.py``, the same
  arithmetic in ``processing_qwen2_audio.py``; the Qwen2-Audio report: "each frame ... roughly
  corresponds to a 40ms segment").
- Gemini: 32 tokens a second ("Gemini represents each second of audio as 32 tokens",
  ai.google.dev/gemini-api/docs/audio).
- GPT-4o Audio: 10 tokens a second, from OpenAI's Realtime API cost guide
  (``guides/realtime-costs``: user audio is 1 token per 100 ms), the rate of GPT-4o's audio
  tokens, applied to chat completions' audio input too (assistant audio is 1 per 50 ms).

Another model's ``audio_tokens`` is left out: no rate is known for it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from collections.abc import Mapping
from typing import Any

import soundfile

# (a substring of the served model id, lower-cased; tokens per second of input audio)
RATES: tuple[tuple[str, int], ...] = (
    ("qwen2.5-omni", 25), ("qwen2_5_omni", 25), ("qwen25_omni", 25),
    ("qwen2-audio", 25), ("qwen2_audio", 25),
    ("gemini", 32),
    ("gpt-4o-audio", 10), ("gpt-4o-mini-audio", 10),   # user audio: 1 token per 100 ms
)
_STIMULI: dict[str, str] = {}     # sha256 of the WAV bytes -> the stimulus path the run names


def register_stimuli(paths: Mapping[str, str]) -> None:
    """Name stimuli by content (``{sha256: path}``) so their requests can point at them."""
    _STIMULI.update(paths)


def qwen_audio_tokens(seconds: float) -> int:
    """Qwen's audio token count for ``seconds`` of speech: the processor's own arithmetic on
    the number of 10 ms Whisper frames."""
    frames = int(round(seconds * 100))
    after_conv = (frames - 1) // 2 + 1
    return max((after_conv - 2) // 2 + 1, 0)


def audio_tokens(model_id: str, seconds: float) -> int | None:
    """Estimated audio tokens of ``seconds`` of input for a model, None where no rate is
    published."""
    name = model_id.lower()
    for pattern, rate in RATES:
        if pattern in name:
            return qwen_audio_tokens(seconds) if rate == 25 else int(round(seconds * rate))
    return None


def audio_part(part: Mapping[str, Any]) -> dict[str, Any]:
    """An ``input_audio`` part as the dry run records it: the stimulus, not its bytes."""
    data = str((part.get("input_audio") or {}).get("data") or "")
    try:
        wav = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"type": "input_audio", "base64_chars": len(data)}
    digest = hashlib.sha256(wav).hexdigest()
    out: dict[str, Any] = {"type": "input_audio", "path": _STIMULI.get(digest), "sha256": digest}
    try:
        info = soundfile.info(io.BytesIO(wav))
    except (RuntimeError, soundfile.LibsndfileError):
        return {**out, "seconds": None, "sample_rate": None}
    return {**out, "seconds": round(info.frames / info.samplerate, 3),
            "sample_rate": int(info.samplerate)}


def audio_fields(model_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A request's ``audio_seconds`` and ``audio_tokens`` (where estimable); {} with no audio."""
    seconds = [float(p["seconds"]) for m in messages if not isinstance(m["content"], str)
               for p in m["content"] if isinstance(p, dict) and p.get("type") == "input_audio"
               and p.get("seconds") is not None]
    if not seconds:
        return {}
    total = round(sum(seconds), 3)
    tokens = [audio_tokens(model_id, s) for s in seconds]
    if any(t is None for t in tokens):
        return {"audio_seconds": total}
    return {"audio_seconds": total, "audio_tokens": int(sum(t for t in tokens if t is not None))}
