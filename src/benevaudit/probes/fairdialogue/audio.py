"""Audio mode: the speaker's group is only heard, through speech synthesised by espeak-ng.

Each group maps to voice settings: gender picks an espeak-ng voice variant (``+m3``/``+f3``),
accent the language voice, age the pitch (0-99) and speaking rate (words per minute). A
combined group (``elderly_female``) merges its parts' settings. The utterance's WAV goes to
the target as an OpenAI-compatible audio-input request: a user message whose content is an
``input_audio`` part holding base64 WAV, which vLLM's server and hosted audio models accept.

espeak-ng 1.51 (Debian 12) ships no Indian, Australian or African English voice. The defaults
below are distinct stand-ins, not the accents themselves: India reads English with Hindi
intonation rules switched to English phonemes (espeak-ng falls back to English for Latin text),
Australia uses the Lancastrian English voice, African uses Swahili letter-to-sound rules. A
study that needs real accents should point ``probe.audio.voices`` at better voices.
"""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.llm.base import Message
from benevaudit.llm.reply_options import reply_cap
from benevaudit.probes.fairdialogue.groups import NEUTRAL, group_parts

ESPEAK = "espeak-ng"


@dataclass(frozen=True)
class Voice:
    """espeak-ng settings: ``-v language[+variant] -p pitch -s rate``."""

    language: str = "en-us"
    variant: str | None = None
    pitch: int = 50
    rate: int = 165

    @property
    def name(self) -> str:
        return f"{self.language}+{self.variant}" if self.variant else self.language


# Each part overrides only the fields it owns, so parts of different attributes combine.
DEFAULT_VOICES: dict[str, dict[str, Any]] = {
    "male": {"variant": "m3"}, "female": {"variant": "f3"},
    "young": {"pitch": 68, "rate": 185}, "elderly": {"pitch": 30, "rate": 125},
    "US": {"language": "en-us"}, "UK": {"language": "en-gb-x-rp"},
    "India": {"language": "hi"}, "Australia": {"language": "en-gb-x-gbclan"},
    "African": {"language": "sw"},
}


def voice_for(group: str, voices: Mapping[str, Mapping[str, Any]] | None = None) -> Voice:
    """The voice of a group; ``neutral`` is the default voice (US English, mid pitch)."""
    table = {**DEFAULT_VOICES, **(voices or {})}
    voice = Voice()
    if group == NEUTRAL:
        return voice
    for part in group_parts(group):
        if part not in table:
            raise ConfigError(f"probe.audio.voices has no voice for {part!r} (group {group!r}); "
                              f"voices are given for {sorted(table)}")
        unknown = set(table[part]) - {"language", "variant", "pitch", "rate"}
        if unknown:
            raise ConfigError(f"probe.audio.voices.{part}: unknown keys {sorted(unknown)}; "
                              "valid: language, variant, pitch, rate")
        voice = replace(voice, **dict(table[part]))
    return voice


def espeak_path() -> str | None:
    """Where espeak-ng is, or None (``scripts/setup_audio.sh`` installs it)."""
    return shutil.which(ESPEAK)


def synthesize(text: str, voice: Voice) -> bytes:
    """A WAV file of ``text`` spoken with ``voice``.

    espeak-ng writes to a temporary file rather than stdout: streamed WAV has no final length
    in its header, which breaks duration checks and some servers' decoders.
    """
    exe = espeak_path()
    if exe is None:
        raise ConfigError("audio mode needs espeak-ng: run scripts/setup_audio.sh "
                          "(apt-get install espeak-ng), or use probe.mode=text")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "utterance.wav"
        cmd = [exe, "-v", voice.name, "-p", str(voice.pitch), "-s", str(voice.rate),
               "-w", str(out), "--", text]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"espeak-ng failed for voice {voice.name!r} "
                               f"(exit {done.returncode}): {done.stderr.strip()[:300]}")
        return out.read_bytes()


def wav_duration(wav: bytes) -> float:
    """Seconds of audio in a WAV file."""
    with wave.open(io.BytesIO(wav)) as w:
        return w.getnframes() / w.getframerate()


def audio_message(wav: bytes, text: str | None = None) -> Message:
    """A user message carrying the WAV as an ``input_audio`` part (plus optional text)."""
    parts: list[dict[str, Any]] = [{"type": "input_audio", "input_audio": {
        "data": base64.b64encode(wav).decode("ascii"), "format": "wav"}}]
    if text:
        parts.append({"type": "text", "text": text})
    # a list of content parts, which the text-chat Message type (str content) does not declare
    return {"role": "user", "content": parts}  # type: ignore[dict-item]  # parts: see above


def audio_request(model: str, instruction: str, wav: bytes, max_tokens: int | None,
                  temperature: float = 0.0, seed: int = 0,
                  max_tokens_field: str | None = None) -> dict[str, Any]:
    """The ``/v1/chat/completions`` body for one spoken utterance: the system prompt holds the
    answer format, the only user content is the audio, so the group is heard, never read.
    (The pipeline may add the answer format as a text part: see :func:`audio_conversation`.)
    The cap goes in ``max_tokens_field`` as the chat path sends it (``llm.max_tokens_field``:
    ``max_completion_tokens`` for OpenAI's own API; None: ``max_tokens``; no cap: none)."""
    messages: list[Any] = [{"role": "system", "content": instruction}] if instruction else []
    return {"model": model, "messages": [*messages, audio_message(wav)],
            **reply_cap(max_tokens, max_tokens_field, spoken=False),
            "temperature": temperature, "seed": seed}


def audio_conversation(wav: bytes, instruction: str, suffix: str = "") -> list[Any]:
    """The conversation of one spoken utterance: the optional system prompt, then the audio
    (plus the answer format as text, the same for every group)."""
    system: list[Any] = [{"role": "system", "content": instruction}] if instruction else []
    return [*system, audio_message(wav, suffix or None)]
