"""Turning a model's generated text into dialogue turns, or a reason why it cannot be.

Models format conversations many ways: ``User:``, ``**User:**``, ``**Agent**:``, ``[user]:``,
``1. User:``, ``- Assistant:``, ``Turn 3 - Agent:``, ``The user: "…"``. Untagged lines continue the current
message; consecutive messages of one speaker merge. A preamble that declines the request
("I can't write…") marks a refusal, including the case where a sanitised dialogue follows:
the class instruction was not followed, so that reply is retried, not kept.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from benevaudit.schema import Turn

USER_NAMES = ("user", "human", "client", "patient", "person", "customer")
AGENT_NAMES = ("agent", "assistant", "ai", "bot", "chatbot", "counselor", "counsellor",
               "coach", "therapist", "support agent", "ai agent", "ai assistant")
_NAMES = "|".join(sorted((re.escape(n) for n in USER_NAMES + AGENT_NAMES), key=len, reverse=True))
TAG = re.compile(
    r"^\s*(?:[-*•>]\s*)?"                       # list bullet or quote marker
    r"(?:(?:turn|message)?\s*\d+\s*[.):\-–]?\s*)?"  # numbering: "3.", "3)", "Turn 3 -"
    r"[*_]{0,2}\[?\s*(?:the\s+)?(?P<speaker>" + _NAMES + r")\s*\d*\s*\]?"  # "[User]", "The agent"
    r"(?:\s*\([^)]{0,40}\))?"                   # a name in brackets: "User (Maria)"
    r"\s*[*_]{0,2}\s*[:：]\s*[*_]{0,2}\s*",      # colon, inside or outside bold
    re.IGNORECASE)
REFUSAL = re.compile(
    r"\b(?:I\s*(?:can(?:'|’)?t|cannot|can not|won(?:'|’)?t|will not|am not able to|'m not able to|"
    r"am unable to|'m unable to|must decline|do not feel comfortable|don't feel comfortable)"
    r"|I(?:'|’)m sorry,? but|I apologi[sz]e,? but|as an AI(?: language model)?,? I"
    r"|against my (?:guidelines|principles))",
    re.IGNORECASE)
TRAILER = re.compile(r"^\s*(?:\(?note\b|notes?:|---+|\*\*\*+|end of (?:the )?conversation|"
                     r"this conversation (?:shows|illustrates|demonstrates))", re.IGNORECASE)


class ParseResult(NamedTuple):
    turns: tuple[Turn, ...]
    reason: str | None   # None when usable; else "refusal" | "unparseable" | "too_short"


def _speaker(name: str) -> str:
    return "user" if name.lower() in USER_NAMES else "agent"


def _unquote(text: str) -> str:
    """Drop markdown emphasis and quotation marks wrapping a whole line or message."""
    text = re.sub(r"^[*_]+|[*_]+$", "", text.strip()).strip()
    if len(text) >= 2 and text[0] in "\"“" and text[-1] in "\"”":
        text = text[1:-1].strip()
    return text


def _clean(text: str) -> str:
    return _unquote(" ".join(text.split()))


def split_turns(text: str) -> tuple[list[Turn], str]:
    """The tagged messages of ``text`` (merged per speaker run) and the untagged preamble."""
    messages: list[list[str]] = []   # [speaker, text]
    preamble: list[str] = []
    for line in text.splitlines():
        m = TAG.match(line)
        if m:
            messages.append([_speaker(m.group("speaker")), _unquote(line[m.end():])])
        elif messages:
            if TRAILER.match(line):
                break
            messages[-1][1] += "\n" + line
        else:
            preamble.append(line)
    turns: list[Turn] = []
    for speaker, body in messages:
        body = _clean(body)
        if not body:
            continue
        if turns and turns[-1].speaker == speaker:
            turns[-1] = Turn(speaker, turns[-1].text + " " + body)
        else:
            turns.append(Turn(speaker, body))
    return turns, "\n".join(preamble)


def parse_dialogue(text: str, min_turns: int = 6, truncated: bool = False) -> ParseResult:
    """Parse one generated dialogue; ``truncated`` (finish_reason "length") drops the last turn."""
    turns, preamble = split_turns(text)
    if REFUSAL.search(preamble if turns else text[:400]):
        return ParseResult(tuple(turns), "refusal")
    if truncated and turns:
        turns = turns[:-1]
    if not turns:
        return ParseResult((), "unparseable")
    if turns[0].speaker != "user":
        turns = turns[1:]  # an agent greeting before the user spoke is not part of the dialogue
    if len(turns) < min_turns:
        return ParseResult(tuple(turns), "too_short")
    return ParseResult(tuple(turns), None)


MESSAGE_REFUSAL = re.compile(
    r"^\W*(?:I(?:'|’)m sorry,? but|I apologi[sz]e,? but|as an AI\b"
    r"|I (?:can(?:'|’)?t|cannot|won(?:'|’)?t|will not|am unable to|'m unable to|must decline to) "
    r"(?:help with|assist with|comply|fulfil|fulfill|provide|write|create|engage|role-?play|"
    r"continue|do that|treat))", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?…][\"”')\]]*(?=\s|$)")


class MessageResult(NamedTuple):
    text: str
    reason: str | None   # None when usable; else "refusal" | "empty_turn"


def parse_message(text: str, truncated: bool = False) -> MessageResult:
    """One self-chat message: drop a speaker label, stop where the model starts the other side.

    ``truncated`` (finish_reason "length") cuts back to the last complete sentence, if any.
    """
    lines = [ln for ln in text.strip().splitlines()]
    if lines and (m := TAG.match(lines[0])):
        lines[0] = lines[0][m.end():]
    for k in range(1, len(lines)):
        if TAG.match(lines[k]):
            lines = lines[:k]
            break
    body = _clean("\n".join(lines))
    if truncated:
        ends = list(_SENTENCE_END.finditer(body))
        if ends and ends[-1].end() > 20:
            body = body[:ends[-1].end()]
    if MESSAGE_REFUSAL.search(body):
        return MessageResult(body, "refusal")
    return MessageResult(body, None if body else "empty_turn")
