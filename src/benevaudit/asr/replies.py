"""Spoken replies in a probe's rows: saved under the run, transcribed, and read as the answer.

Every row a target answered gains ``reply_text`` (the model's own text), ``reply_audio`` (the
saved WAV, relative to the run: ``audio_out/<task>/<item>__<group>.wav``, or None),
``api_transcript`` (the server's own transcript of its audio, or None), ``transcript``
(Whisper's, or None) and ``asr_model``. The answer the parser reads is what was *heard*:
Whisper's transcript where there is one, else the API's transcript, else the text reply.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

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


def save_audio(run_dir: Path, rel: str, reply: Completion) -> Clip | None:
    """Write the reply's WAV to ``rel`` under the run (when it spoke) and return its clip,
    checked readable."""
    if not reply.audio:
        return None
    data = base64.b64decode(reply.audio)
    clip = read_clip(data, f"the spoken reply for {rel}")
    (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / rel).write_bytes(data)
    return clip


def save_reply(run_dir: Path, row: dict[str, Any], reply: Completion) -> Clip | None:
    """Write the row's spoken reply (when it spoke), note its path, return its clip."""
    rel = reply_path(str(row["task"]), str(row["item"]), str(row["group"]))
    clip = save_audio(run_dir, rel, reply)
    if clip is not None:
        row["reply_audio"] = rel
    return clip


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


def add_spoken(rows: list[dict[str, Any]], replies: Sequence[Completion], run_dir: Path,
               asr: AsrSpec | None, transcribe: Transcribe | None = None) -> None:
    """Fill :data:`COLUMNS` of ``rows`` (one per reply, in order) and set each ``answer`` to
    what was heard. ``transcribe`` replaces the transcriber ``asr`` names (tests, reuse)."""
    spoken: list[tuple[dict[str, Any], Clip]] = []
    for row, reply in zip(rows, replies, strict=True):
        row.update(reply_text=reply.text, reply_audio=None, api_transcript=reply.transcript,
                   transcript=None, asr_model=None)
        clip = save_reply(run_dir, row, reply)
        if clip is not None:
            spoken.append((row, clip))
    if spoken and asr is not None and asr.kind == "whisper":
        texts = (transcribe or transcriber_of(asr))([c for _, c in spoken])
        for (row, _), text in zip(spoken, texts, strict=True):
            row.update(transcript=text, asr_model=asr.name)
    elif spoken:
        log.warning("%d replies are spoken and asr=none: their answers are the API's "
                    "transcript or the text reply (asr=whisper_large_v3 transcribes them)",
                    len(spoken))
    for row in rows:
        heard = row["transcript"] if row["transcript"] is not None else row["api_transcript"]
        row["answer"] = heard if heard is not None else row["reply_text"]


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
# and where its audio was saved (None: a text reply)
Listen = Callable[[Sequence[tuple[str, ...]], int, Sequence[Completion]],
                  list[tuple[str, Optional[str]]]]


def plain_texts(keys: Sequence[tuple[str, ...]], turn: int, replies: Sequence[Completion]
                ) -> list[tuple[str, str | None]]:
    """A :data:`Listen` without a run: each reply's text, else the API's transcript."""
    return [(r.text or r.transcript or "", None) for r in replies]


class Listener:
    """The :data:`Listen` of a run: a later turn's replies (feedback rounds) read as the first
    turn's are. A spoken reply is saved as ``audio_out/<task>/<item>__<group>__round-<r>.wav``
    and heard through :func:`heard_texts` (Whisper's transcript under ``asr=whisper``), the
    transcriber loaded once, on the first spoken reply."""

    def __init__(self, run_dir: Path, asr: AsrSpec | None,
                 transcribe: Transcribe | None = None) -> None:
        self.run_dir, self.asr, self._transcribe = run_dir, asr, transcribe

    def transcribe(self, clips: Sequence[Clip]) -> list[str]:
        if self._transcribe is None:
            self._transcribe = transcriber_of(self.asr) if self.asr else None
        assert self._transcribe is not None   # heard_texts transcribes only under asr=whisper
        return self._transcribe(clips)

    def __call__(self, keys: Sequence[tuple[str, ...]], turn: int,
                 replies: Sequence[Completion]) -> list[tuple[str, str | None]]:
        paths = [reply_path(k[0], k[2], k[3], turn) for k in keys]
        saved = [rel if save_audio(self.run_dir, rel, r) is not None else None
                 for rel, r in zip(paths, replies, strict=True)]
        return list(zip(heard_texts(replies, self.asr, self.transcribe), saved, strict=True))
