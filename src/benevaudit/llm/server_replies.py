"""What a model or speech server answered, checked against its protocol before anything uses it.

A server can answer HTTP 200 with a body that is not what the protocol promises: JSON cut off
mid-stream by a proxy, an error page, a chat completion whose ``choices`` is missing or empty,
a message without ``content``, audio that is not audio. The client library passes such a body
through (or fails deep inside it with a traceback), and a cache would keep it. Here each reply
is read as the protocol says; anything else raises :class:`BadReply`, which says what is wrong
(never the reply's text: it may quote the prompt). :func:`asked` asks again under the client's
own backoff, and a reply still bad past the retries becomes the caller's ``ServerError``, which
names the URL.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import soundfile

T = TypeVar("T")
FIRST_WAIT_S = 0.5      # the openai client's backoff: 0.5 s doubling, 8 s at most
LONGEST_WAIT_S = 8.0


class BadReply(Exception):
    """A reply that is not of the protocol's shape; the message says how, in a few words."""


def asked(fetch: Callable[[], T], retries: int, on_retry: Callable[[], None] | None = None,
          sleep: Callable[[float], None] = time.sleep) -> T:
    """``fetch()``, asked again up to ``retries`` times while its reply is malformed (the
    server may be restarting, or a proxy may have cut the body). The last :class:`BadReply`
    propagates."""
    for attempt in range(retries + 1):
        try:
            return fetch()
        except BadReply:
            if attempt >= retries:
                raise
            if on_retry is not None:
                on_retry()
            sleep(min(FIRST_WAIT_S * 2.0 ** attempt, LONGEST_WAIT_S))
    raise AssertionError("unreachable: the loop returns or raises")


def json_body(content: bytes) -> Any:
    """The decoded JSON of a reply's body."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):      # JSONDecodeError, UnicodeDecodeError
        raise BadReply(f"a body that is not JSON ({len(content)} bytes: cut off, or another "
                       "format)") from None


def _field(owner: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``owner[key]`` of type ``kind``, or a BadReply naming ``where.key``."""
    if not isinstance(owner, dict):
        raise BadReply(f"{where} is a {type(owner).__name__}, not a JSON object")
    if key not in owner:
        raise BadReply(f"{where} has no {key!r}")
    value = owner[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise BadReply(f"{where}.{key} is a {type(value).__name__}")
    return value


def _optional(owner: dict[str, Any], key: str, kind: type | tuple[type, ...],
              where: str) -> Any:
    return None if owner.get(key) is None else _field(owner, key, kind, where)


class ChatReply(NamedTuple):
    """The fields of one chat completion that a :class:`~benevaudit.llm.base.Completion` keeps."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    audio: str | None          # base64 audio bytes of a spoken reply
    transcript: str | None


def chat_reply(data: Any, audio_format: str | None = None) -> ChatReply:
    """A ``/v1/chat/completions`` reply: ``choices[0].message`` with ``content`` (a string, or
    null as the protocol allows), an optional ``usage`` and, for a spoken reply, ``audio``
    with base64 ``data`` (readable audio where ``audio_format`` is wav) and a ``transcript``."""
    choices = _field(data, "choices", list, "the reply")
    if not choices:
        raise BadReply("the reply's 'choices' is empty")
    message = _field(choices[0], "message", dict, "choices[0]")
    content = _field(message, "content", (str, type(None)), "choices[0].message")
    finish = _optional(choices[0], "finish_reason", str, "choices[0]")
    usage = _optional(data, "usage", dict, "the reply") or {}
    tokens = [_optional(usage, k, int, "usage") or 0
              for k in ("prompt_tokens", "completion_tokens")]
    spoken = _optional(message, "audio", dict, "choices[0].message")
    audio = transcript = None
    if spoken is not None:
        audio = _field(spoken, "data", str, "choices[0].message.audio")
        transcript = _field(spoken, "transcript", str, "choices[0].message.audio")
        clip = base64_bytes(audio, "choices[0].message.audio.data")
        if (audio_format or "").lower() == "wav":
            check_wav(clip, "choices[0].message.audio.data")
    return ChatReply(content or "", finish or "length", tokens[0], tokens[1], audio, transcript)


def base64_bytes(text: str, where: str) -> bytes:
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadReply(f"{where} is not base64") from None
    if not data:
        raise BadReply(f"{where} is empty")
    return data


def check_wav(data: bytes, where: str) -> None:
    """A WAV file's bytes (RIFF/WAVE header) that soundfile reads, holding at least one frame:
    what a speech server was asked for (``response_format``/``format`` wav)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise BadReply(f"{where}: {len(data)} bytes without a RIFF/WAVE header, not a WAV clip")
    try:
        info = soundfile.info(io.BytesIO(data))
    except (soundfile.LibsndfileError, RuntimeError, TypeError):
        raise BadReply(f"{where}: a WAV header, but not audio soundfile can read (cut off?)"
                       ) from None
    if info.frames <= 0:
        raise BadReply(f"{where}: a WAV clip with no audio (0 frames)")


def tokens_reply(data: Any, needs_length: bool) -> tuple[list[int], int | None]:
    """A vLLM ``/tokenize`` reply: ``tokens`` (integers) and, for a chat, ``max_model_len``."""
    tokens = _field(data, "tokens", list, "the /tokenize reply")
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        raise BadReply("the /tokenize reply's 'tokens' holds something other than integers")
    length = _field(data, "max_model_len", int, "the /tokenize reply") if needs_length else None
    return tokens, length


def top_logprobs(data: Any) -> dict[int, float]:
    """``choices[0].logprobs.top_logprobs[0]`` of a ``/v1/completions`` reply, as vLLM writes it
    with ``return_tokens_as_token_ids``: ``{"token_id:123": logprob}``."""
    choices = _field(data, "choices", list, "the reply")
    if not choices:
        raise BadReply("the reply's 'choices' is empty")
    logprobs = _field(choices[0], "logprobs", dict, "choices[0]")
    top = _field(logprobs, "top_logprobs", list, "choices[0].logprobs")
    if not top or not isinstance(top[0], dict):
        raise BadReply("choices[0].logprobs.top_logprobs holds no first position")
    out: dict[int, float] = {}
    for key, value in top[0].items():
        name, _, number = str(key).partition(":")
        if name != "token_id" or not number.isdigit() or not isinstance(value, (int, float)) \
                or isinstance(value, bool):
            raise BadReply("choices[0].logprobs.top_logprobs[0] is not {'token_id:<id>': "
                           "<log-probability>}")
        out[int(number)] = float(value)
    return out
