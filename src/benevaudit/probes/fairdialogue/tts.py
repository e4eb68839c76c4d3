"""The ``tts_server`` source's clips: asked of an OpenAI-compatible ``/v1/audio/speech``,
checked, and cached under ``probe.audio.cache`` by the hash of text, voice, model and server;
each group speaks in the voice ``probe.audio.voices`` gives it or its parts (:func:`server_voice`).

A clip is checked before it is cached (a WAV header, read by soundfile, at least one frame):
a server that answers HTTP 200 with bytes that are not audio (an error page, a cut-off body) is
asked again, as the client retries a failed request, and past its retries the run ends with one
``ServerError`` naming the URL, the clips already received kept. A cached clip that fails the
same check (left by an earlier release, or damaged on disk) is dropped with a warning and asked
again, so a mended server mends the cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError, ServerError
from benevaudit.llm.server_replies import BadReply, asked, check_wav
from benevaudit.probes.fairdialogue.groups import NEUTRAL, group_parts
from benevaudit.probes.audio_spec import ServerSpec

log = logging.getLogger(__name__)
RETRIES = 2          # the client's retries of a failed request, and of a malformed reply


def clip_key(text: str, voice: str, model: str, base_url: str) -> str:
    """The cache key of one clip: the hash of everything that changes the audio."""
    return hashlib.sha256("\x1f".join((text, voice, model, base_url)).encode()).hexdigest()


def server_voice(group: str, voices: Mapping[str, Any]) -> str:
    """The TTS voice of a group: its own entry, else the one voice its parts name."""
    if group in voices:
        return str(voices[group])
    key = "neutral" if group == NEUTRAL else None
    parts = [key] if key else group_parts(group)
    named = {str(voices[p]) for p in parts if p in voices}
    if len(named) != 1:
        raise ConfigError(f"probe.audio.voices: group {group!r} needs one voice "
                          f"(its own entry or one of its parts {parts}); found {sorted(named)}")
    return named.pop()


def speech_client(server: ServerSpec) -> Any:
    """The official client for the TTS endpoint (a local server may need no key)."""
    import openai   # the official client: only a tts_server source needs it

    key = os.environ.get(server.api_key_env, "") if server.api_key_env else ""
    if server.api_key_env and not key:
        raise ConfigError(f"probe.audio.server.api_key_env: the variable "
                          f"{server.api_key_env!r} is unset; export the TTS server's key")
    return openai.OpenAI(base_url=server.base_url, api_key=key or "none", max_retries=RETRIES)


def speak(client: Any, server: ServerSpec, text: str, voice: str) -> bytes:
    """One clip from ``/v1/audio/speech``, checked; a refused request is an ``error:`` line,
    a reply that is not a WAV clip is asked again (a ``BadReply`` past the retries)."""
    import openai   # the official client: only a tts_server source needs it

    def fetch() -> bytes:
        try:
            reply = client.audio.speech.create(model=server.model, voice=voice, input=text,
                                               response_format="wav")
        except openai.APIStatusError as e:
            raise ConfigError(f"probe.audio.server {server.base_url}: voice {voice!r} refused "
                              f"(HTTP {e.status_code}): {str(e.message)[:200]}") from None
        except openai.APIConnectionError:
            raise ConfigError(f"probe.audio.server: no TTS server answers at "
                              f"{server.base_url}") from None
        data = bytes(reply.content)
        check_wav(data, "the reply")
        return data

    return asked(fetch, RETRIES)


def usable(path: Path) -> bool:
    """Whether a cached clip passes the check a fresh one must pass."""
    try:
        check_wav(path.read_bytes(), str(path))
    except (BadReply, OSError):
        return False
    return True


def cached_clip(cache: Path, server: ServerSpec, text: str, voice: str,
                client: Callable[[], Any]) -> Path:
    """The clip of ``text`` in ``voice``: from the cache when it is there and checks out, else
    asked of the server (``client()`` builds the client on first use) and cached whole."""
    path = cache / f"{clip_key(text, voice, server.model, server.base_url or '')}.wav"
    if path.exists():
        if usable(path):
            return path
        log.warning("%s: a cached clip that is not a readable WAV; dropped, it is asked again",
                    path)
        path.unlink()
    try:
        clip = speak(client(), server, text, voice)
    except BadReply as e:
        raise ServerError(f"{server.base_url}/audio/speech: voice {voice!r}: {e}, still after "
                          f"{RETRIES} retries; the clips already received are kept in "
                          f"{cache}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_bytes(clip)
    tmp.replace(path)
    return path
