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
from typing import Any

from benevaudit.asr.spec import AsrSpec
from benevaudit.llm.audio_in import Clip, read_clip
from benevaudit.llm.base import Completion

log = logging.getLogger(__name__)
AUDIO_OUT = "audio_out"
COLUMNS = ("reply_text", "reply_audio", "api_transcript", "transcript", "asr_model")

Transcribe = Callable[[Sequence[Clip]], list[str]]


def reply_path(task: str, item: str, group: str) -> str:
    """Where a row's spoken reply is saved, relative to the run directory."""
    return f"{AUDIO_OUT}/{task}/{item}__{group}.wav"


def save_reply(run_dir: Path, row: dict[str, Any], reply: Completion) -> Clip | None:
    """Write the reply's WAV (when it spoke) and return its clip, checked readable."""
    if not reply.audio:
        return None
    rel = reply_path(str(row["task"]), str(row["item"]), str(row["group"]))
    data = base64.b64decode(reply.audio)
    clip = read_clip(data, f"the spoken reply for {rel}")
    (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / rel).write_bytes(data)
    row["reply_audio"] = rel
    return clip


def transcriber_of(asr: AsrSpec) -> Transcribe:
    """Whisper's ``transcribe`` for ``asr`` (loads the model)."""
    from benevaudit.asr.whisper import Transcriber  # transformers loads only now

    return Transcriber(asr).transcribe


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
