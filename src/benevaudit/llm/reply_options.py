"""What an ``openai`` request asks of the reply: a spoken one (``modalities``, ``audio``), and
its cap (which field, and how large for a spoken reply).

OpenAI deprecated ``max_tokens`` in chat completions for ``max_completion_tokens``, "an upper
bound for the number of tokens that can be generated for a completion" (the API reference).
``llm.max_tokens_field`` names the field a server reads: ``max_completion_tokens`` for OpenAI's
own API (``target=gpt4o_audio``), ``max_tokens`` (the backend's default) for the servers that
know only the older one.

A spoken reply's completion tokens are its text and its audio together (the usage's
``completion_tokens_details`` counts ``text_tokens`` and ``audio_tokens``), so a cap sized for
the text would cut the speech short. The cap a caller gives (``Sampling.max_tokens``) is the
reply's length in text tokens; a request asking for audio sends that times
:data:`SPOKEN_CAP_FACTOR` (or ``llm.spoken_cap_factor``). The factor:

- assistant audio is 1 token per 50 ms, 20 a second (OpenAI's Realtime API cost guide,
  ``guides/realtime-costs``; GPT-4o's audio tokens);
- conversational speech runs at about 2.5 words, some 3.3 text tokens, a second; sized for
  slower speech, 2 text tokens a second, each text token of the reply takes at most 10 audio
  tokens;
- the reply's text is counted as well, and a spoken reply's text counts high: a published
  ``gpt-4o-audio-preview`` reply of seven words ("Hello! How can I assist you today?")
  reported 17 text and 37 audio tokens, so the text is allowed twice the cap;

so 10 + 2 = 12 completion tokens per text token of the cap.
"""

from __future__ import annotations

from typing import Any

from benevaudit.errors import ConfigError

FIELDS = ("max_tokens", "max_completion_tokens")
AUDIO_TOKENS_PER_SECOND = 20      # assistant audio: 1 token per 50 ms
TEXT_TOKENS_PER_SECOND = 2        # slow speech; ordinary speech is about 3.3
TEXT_COUNT = 2                    # the reply's text tokens, as the API counts them
SPOKEN_CAP_FACTOR = AUDIO_TOKENS_PER_SECOND // TEXT_TOKENS_PER_SECOND + TEXT_COUNT   # 12


def reply_cap(max_tokens: int | None, field: str | None, spoken: bool,
              factor: int | None = None) -> dict[str, int]:
    """The request's cap: ``{field: tokens}``, or {} for no cap (``max_tokens`` None); a
    ``spoken`` reply's is ``max_tokens`` times ``factor`` (None: :data:`SPOKEN_CAP_FACTOR`)."""
    field = field or "max_tokens"
    if field not in FIELDS:
        raise ValueError(f"llm.max_tokens_field={field!r}: expected one of {list(FIELDS)}")
    if max_tokens is None:
        return {}
    return {field: max_tokens * (factor or SPOKEN_CAP_FACTOR) if spoken else max_tokens}


def spoken_reply(modalities: list[str] | None, audio: dict[str, Any] | None,
                 audio_out: bool | None) -> tuple[list[str] | None, dict[str, Any] | None]:
    """The ``modalities`` and ``audio`` a request sends: as configured (``audio_out`` None),
    neither (false: a text reply), or both, checked (true)."""
    if audio_out is False:
        return None, None
    if audio_out and ("audio" not in (modalities or []) or not audio):
        raise ConfigError("llm.audio_out=true on the openai backend needs llm.modalities with "
                          "audio and an llm.audio block ({voice: ..., format: wav}), as "
                          "target=gpt4o_audio sets them; got modalities="
                          f"{list(modalities or [])}, audio={audio or None}")
    return (list(modalities) if modalities else None), (dict(audio) if audio else None)
