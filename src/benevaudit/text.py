"""Rendering dialogues to classifier text, and the one word-splitting rule.

Rendering follows the study: one ``[user]: …`` or ``[agent]: …`` line per message.
Words are what lexicons count and interventions edit: a run of word characters (with inner
apostrophes, so "don't" is one word) or a single punctuation mark. WordPiece pieces are merged
into the word whose character span contains them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

MASK_TOKEN = "[unused0]"
"""Replacement for masked cue words; a single vocabulary entry of the BERT WordPiece vocab."""

SPEAKER_PREFIX = {"user": "[user]: ", "agent": "[agent]: "}

WORD_RE = re.compile(r"\[unused0\]|\w+(?:['’]\w+)*|[^\w\s]")


class Span(NamedTuple):
    """A word of a rendered dialogue: its text, character span, turn index and speaker."""

    word: str
    start: int
    end: int
    turn: int
    speaker: str


def render_turns(turns: Iterable) -> str:
    """Render turns (objects with .speaker/.text or dicts) as one line per message."""
    lines = []
    for t in turns:
        speaker, text = (t["speaker"], t["text"]) if isinstance(t, dict) else (t.speaker, t.text)
        lines.append(SPEAKER_PREFIX[speaker] + " ".join(text.split()))
    return "\n".join(lines)


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


def word_spans(turns: Sequence) -> list[Span]:
    """Word spans over the rendered text of ``turns``, speaker prefixes excluded."""
    spans: list[Span] = []
    offset = 0
    for i, t in enumerate(turns):
        speaker, text = (t["speaker"], t["text"]) if isinstance(t, dict) else (t.speaker, t.text)
        prefix = SPEAKER_PREFIX[speaker]
        body = " ".join(text.split())
        base = offset + len(prefix)
        for m in WORD_RE.finditer(body):
            spans.append(Span(m.group(), base + m.start(), base + m.end(), i, speaker))
        offset = base + len(body) + 1  # "\n"
    return spans
