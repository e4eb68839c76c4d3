"""Spoken replies in a probe's rows: kept in memory, transcribed, and read as the answer.

Every row a target answered gains ``reply_text`` (the model's own text), ``reply_audio`` (where
the WAV goes, relative to the run: ``audio_out/<task>/<item>__<group>.wav``, or None),
``api_transcript`` (the server's own transcript of its audio, or None), ``transcript``
(Whisper's, or None) and ``asr_model``. The answer the parser reads is what was *heard*:
Whisper's transcript where there is one, else the API's transcript, else the text reply. The
WAVs come back as :class:`SpokenReply` values (path and bytes); ``benevaudit.outputs`` writes
them into the run directory with the rows.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from benevaudit.asr.spec import AsrSpec
from benevaudit.llm.audio_in import Clip, read_clip
from benevaudit.llm.base import Completion

log = logging.getLogger(__name__)
AUDIO_OUT = "audio_out"
COLUMNS = ("reply_text", "reply_audio", "api_transcript", "transcript", "asr_model")

Transcribe = Callable[[Sequence[Clip]], list[str]]


def reply_path(task: str, item: str, group: str, turn: int | None = None) -> str:
    """Where a row's spoken reply is saved, relative to the run directory; a later turn's (a
    feedback round's) gets ``__round-<turn>``."""
    tail = "" if turn is None else f"__round-{turn}"
    return f"{AUDIO_OUT}/{task}/{item}__{group}{tail}.wav"


@dataclass(frozen=True)
class SpokenReply:
    """One spoken reply as the target sent it: its WAV bytes and where they go under the run
    (:func:`reply_path`)."""

    path: str
    data: bytes = field(repr=False)


class Spoken(NamedTuple):
    """A spoken reply and its clip, decoded once: the bytes to keep, the samples to hear."""

    reply: SpokenReply
    clip: Clip


def spoken(rel: str, reply: Completion) -> Spoken | None:
    """The reply's WAV (when it spoke), to be kept at ``rel`` under the run, with its clip,
    checked readable; None for a text reply."""
    if not reply.audio:
        return None
    data = base64.b64decode(reply.audio)
    return Spoken(SpokenReply(rel, data), read_clip(data, f"the spoken reply for {rel}"))


def transcriber_of(asr: AsrSpec) -> Transcribe:
    """Whisper's ``transcribe`` for ``asr`` (loads the model)."""
    from benevaudit.asr.whisper import Transcriber  # transformers loads only now

    return Transcriber(asr).transcribe


class Hearing:
    """One Whisper for a whole run (the spoken stimuli, then the spoken replies), loaded on
    first use: ``transcribe`` is a :data:`Transcribe`, ``normalise`` Whisper's English text
    normaliser for word error rates."""

    def __init__(self, asr: AsrSpec) -> None:
        self.asr, self.name = asr, asr.name
        self._model: Any = None

    def model(self) -> Any:
        if self._model is None:
            from benevaudit.asr.whisper import Transcriber  # transformers loads only now

            self._model = Transcriber(self.asr)
        return self._model

    def transcribe(self, clips: Sequence[Clip]) -> list[str]:
        return list(self.model().transcribe(clips)) if clips else []

    def normalise(self, text: str) -> str:
        return str(self.model().normalise(text))


def hearing_of(asr: AsrSpec | None) -> Hearing | None:
    """The run's :class:`Hearing` under ``asr=whisper``; None without a transcriber."""
    return Hearing(asr) if asr is not None and asr.kind == "whisper" else None


def add_spoken(rows: list[dict[str, Any]], replies: Sequence[Completion],
               asr: AsrSpec | None, transcribe: Transcribe | None = None) -> list[SpokenReply]:
    """Fill :data:`COLUMNS` of ``rows`` (one per reply, in order), set each ``answer`` to what
    was heard, and return the spoken replies' WAVs (each row's ``reply_audio`` names its
    path). ``transcribe`` replaces the transcriber ``asr`` names (tests, reuse)."""
    said: list[tuple[dict[str, Any], Spoken]] = []
    for row, reply in zip(rows, replies, strict=True):
        row.update(reply_text=reply.text, reply_audio=None, api_transcript=reply.transcript,
                   transcript=None, asr_model=None)
        made = spoken(reply_path(str(row["task"]), str(row["item"]), str(row["group"])), reply)
        if made is not None:
            row["reply_audio"] = made.reply.path
            said.append((row, made))
    if said and asr is not None and asr.kind == "whisper":
        texts = (transcribe or transcriber_of(asr))([s.clip for _, s in said])
        for (row, _), text in zip(said, texts, strict=True):
            row.update(transcript=text, asr_model=asr.name)
    elif said:
        log.warning("%d replies are spoken and asr=none: their answers are the API's "
                    "transcript or the text reply (asr=whisper_large_v3 transcribes them)",
                    len(said))
    for row in rows:
        heard = row["transcript"] if row["transcript"] is not None else row["api_transcript"]
        row["answer"] = heard if heard is not None else row["reply_text"]
    return [s.reply for _, s in said]


def heard_texts(replies: Sequence[Completion], asr: AsrSpec | None,
                transcribe: Transcribe | None = None) -> list[str]:
    """What each reply says, for a later turn that reads it (a feedback round): Whisper's
    transcript of a spoken reply under ``asr=whisper``, else the API's transcript, else the
    text. Nothing is saved."""
    texts = [r.transcript if r.audio and r.transcript is not None else r.text for r in replies]
    spoken = [i for i, r in enumerate(replies) if r.audio]
    if spoken and asr is not None and asr.kind == "whisper":
        clips = [read_clip(base64.b64decode(replies[i].audio or ""), f"spoken reply {i}")
                 for i in spoken]
        for i, text in zip(spoken, (transcribe or transcriber_of(asr))(clips), strict=True):
            texts[i] = text
    return texts


# (each reply's key (task, attribute, item, group), the turn, the replies) -> what each said
# and where its audio goes under the run (None: a text reply)
Listen = Callable[[Sequence[tuple[str, ...]], int, Sequence[Completion]],
                  list[tuple[str, Optional[str]]]]


def plain_texts(keys: Sequence[tuple[str, ...]], turn: int, replies: Sequence[Completion]
                ) -> list[tuple[str, str | None]]:
    """A :data:`Listen` without a run: each reply's text, else the API's transcript."""
    return [(r.text or r.transcript or "", None) for r in replies]


class Listener:
    """The :data:`Listen` of a run: a later turn's replies (feedback rounds) read as the first
    turn's are. A spoken reply is kept (``spoken``, in the order heard) for
    ``audio_out/<task>/<item>__<group>__round-<r>.wav`` and heard through :func:`heard_texts`
    (Whisper's transcript under ``asr=whisper``), the transcriber loaded once, on the first
    spoken reply."""

    def __init__(self, asr: AsrSpec | None, transcribe: Transcribe | None = None) -> None:
        self.asr, self._transcribe = asr, transcribe
        self.spoken: list[SpokenReply] = []

    def transcribe(self, clips: Sequence[Clip]) -> list[str]:
        if self._transcribe is None:
            self._transcribe = transcriber_of(self.asr) if self.asr else None
        assert self._transcribe is not None   # heard_texts transcribes only under asr=whisper
        return self._transcribe(clips)

    def __call__(self, keys: Sequence[tuple[str, ...]], turn: int,
                 replies: Sequence[Completion]) -> list[tuple[str, str | None]]:
        made = [spoken(reply_path(k[0], k[2], k[3], turn), r)
                for k, r in zip(keys, replies, strict=True)]
        self.spoken += [m.reply for m in made if m is not None]
        return list(zip(heard_texts(replies, self.asr, self.transcribe),
                        [m.reply.path if m is not None else None for m in made], strict=True))
