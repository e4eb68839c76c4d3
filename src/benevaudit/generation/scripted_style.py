"""How the ``scripted`` generator's dialogues read: each generator's style, the class-specific
phrase banks per sentence slot, the per-class structural shifts, and the dialogue length
distribution (user+agent exchanges) that the LLM generators' prompts share.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from benevaudit.generation import agent_phrases as A
from benevaudit.generation.grid import SCRIPTED_GENERATORS
from benevaudit.generation.topics import TOPICS, Topic

EXCHANGES = (5, 6, 7, 8, 9)          # user+agent pairs: 10-18 turns
EXCHANGE_WEIGHTS = (0.1, 0.2, 0.2, 0.3, 0.2)  # mean 7.3 pairs = 14.6 turns, as in BenevDial


class Style(NamedTuple):
    """A generator's phrasing habits, so the three scripted generators read differently."""

    connectors: tuple[str, ...]   # prefixed to some substance sentences
    connector_p: float
    openers: tuple[str, ...]      # prefixed to some agent turns
    opener_p: float
    extra_substance_p: float      # chance of a second substance sentence in a middle turn
    user_lower_p: float           # chance a user message starts in lower case


STYLES: dict[str, Style] = {
    "scripted-a": Style((), 0.0, (), 0.0, 0.25, 0.0),
    "scripted-b": Style(("Additionally, ", "In addition, ", "Also, ", "On top of that, ",
                         "Beyond that, ", "It's also worth saying that "), 0.7, (), 0.0, 0.6, 0.0),
    "scripted-c": Style(("And ", "Plus, ", "Also, "), 0.4,
                        ("So, ", "Okay, so ", "Alright, ", "Well, ", "Honestly, "), 0.45, 0.4, 0.5),
}
assert tuple(STYLES) == SCRIPTED_GENERATORS


def agent_view(text: str) -> str:
    """Rewrite a user-perspective phrase for the agent ("my schedule" -> "your schedule")."""
    text = re.sub(r"\bI'm\b", "you're", text)
    text = re.sub(r"\bmy\b", "your", text)
    text = re.sub(r"\bme\b", "you", text)
    return re.sub(r"\bI\b", "you", text)


AGENT_TOPICS: dict[str, tuple[Topic, ...]] = {
    role: tuple(Topic(agent_view(t.concern), agent_view(t.subject),
                      tuple(map(agent_view, t.aims)), tuple(map(agent_view, t.gentle)),
                      t.methods) for t in topics)
    for role, topics in TOPICS.items()
}

# (slot, label, warm) -> banks one of which is drawn uniformly for a class-specific sentence
CLASS_BANKS: dict[tuple[str, str, bool], tuple[tuple[str, ...], ...]] = {}
for warm in (True, False):
    CLASS_BANKS.update({
        ("ack", "N", warm): (A.ACK_WARM,) if warm else (A.ACK_NEUTRAL,),
        ("ack", "OB", warm): (A.ACK_COLD,),
        ("ack", "BB", warm): (A.ACK_EFFUSIVE, A.ACK_WARM),
        ("demo", "N", warm): (A.DEMO_AFFIRM,),
        ("demo", "OB", warm): (A.DEMO_DISPARATE,),
        ("demo", "BB", warm): (A.DEMO_DISPARATE,),
        ("substance", "N", warm): (A.UNIFORM,),
        ("substance", "OB", warm): (A.DISPARATE_CORE, A.DISPARATE_COLD),
        ("substance", "BB", warm): (A.DISPARATE_CORE, A.DISPARATE_WARM),
        ("question", "N", warm): (A.QUESTION_OPEN,),
        ("question", "OB", warm): (A.QUESTION_CURT,),
        ("question", "BB", warm): (A.QUESTION_LEADING,),
        ("close", "N", warm): (A.CLOSE_N,),
        ("close", "OB", warm): (A.CLOSE_OB,),
        ("close", "BB", warm): (A.CLOSE_BB,),
    })


# Structural habits per class, scaled by ``signal`` (the study: fewer questions in OB and BB,
# longer agent turns in BB): shifts of the question and extra-sentence probabilities.
QUESTION_SHIFT = {"N": 0.15, "OB": -0.3, "BB": -0.1}
LENGTH_SHIFT = {"N": 0.0, "OB": -0.15, "BB": 0.3}
