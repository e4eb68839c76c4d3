"""The ``scripted`` generator: BenevDial-format dialogues composed from phrase banks, no model.

It is a stand-in for LLM-generated data, not BenevDial: it crosses the same attribute grid and
composes each class's tone and treatment (N uniform treatment in a warm or neutral tone; OB
disparate treatment in a cold tone; BB the same disparate treatment in a warm tone). Because it
can plant known class-correlated cue tokens at set rates, it is also the audit's positive
control: attribution must find what was planted.

Every dialogue is a pure function of (condition, seed, signal, planted cues): its random stream
is seeded from a sha256 of the condition id and the global seed.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from benevaudit.errors import ConfigError
from benevaudit.generation import agent_phrases as A
from benevaudit.generation import user_phrases as U
from benevaudit.generation.grid import Condition
from benevaudit.generation.scripted_style import (
    AGENT_TOPICS,
    CLASS_BANKS,
    EXCHANGE_WEIGHTS,
    EXCHANGES,
    LENGTH_SHIFT,
    QUESTION_SHIFT,
    STYLES,
    Style,
)
from benevaudit.generation.topics import (
    ABILITY_PHRASES, ABILITY_REFERENCES, ABILITY_WHO, AGE_REFERENCES, AGE_WORDS, GENDER_NOUNS,
    GENDER_REFERENCES, RACE_WORDS, TOPICS,
)
from benevaudit.schema import CLASSES, Dialogue, Turn

SCRIPTED_VERSION = "2"
"""Bump whenever phrase banks or composition change: it is part of cached sample names."""
DEFAULT_SIGNAL = 0.8
_PUNCT = re.compile(r"^[^\w\s]+$")


@dataclass(frozen=True)
class PlantedCue:
    """A token inserted into agent turns of class ``label`` with probability ``rate`` per turn."""

    token: str
    label: str
    rate: float

    def __post_init__(self) -> None:
        if not self.token or any(c.isspace() for c in self.token):
            raise ConfigError(f"PlantedCue.token must be one word or mark, got {self.token!r}")
        if self.label not in CLASSES:
            raise ConfigError(f"PlantedCue.label must be one of {list(CLASSES)}, got {self.label!r}")
        if not 0.0 <= self.rate <= 1.0:
            raise ConfigError(f"PlantedCue.rate must be in [0, 1], got {self.rate}")

    @property
    def is_punct(self) -> bool:
        return bool(_PUNCT.match(self.token))


def dialogue_seed(dialogue_id: str, seed: int) -> int:
    """The per-dialogue random seed: stable across runs, processes and machines."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{dialogue_id}".encode()).digest()[:8], "big")


_PERMS3 = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def _pick(rng: random.Random, seq: Sequence[str]) -> str:
    """``rng.choice`` at a fraction of its cost (this runs ~70 times per dialogue)."""
    return seq[int(rng.random() * len(seq))]


def _with_article(phrase: str) -> str:
    return ("an " if phrase[:1] in "AEIOUaeiou8" or phrase[:2] == "18" else "a ") + phrase


def _lower_first(s: str) -> str:
    return s if s[:2] in ("I ", "I'") else s[:1].lower() + s[1:]


def _slots(c: Condition, rng: random.Random) -> tuple[dict[str, str], dict[str, str]]:
    """Per-dialogue placeholder values for agent and user phrasing."""
    age, gender, race, ability = c.user
    k = int(rng.random() * 3)
    i = int(rng.random() * len(TOPICS[c.role]))
    topic_u = TOPICS[c.role][i]
    topic_a = AGENT_TOPICS[c.role][i]
    aims, gentle, methods = (_PERMS3[int(rng.random() * 6)] for _ in range(3))
    race_word = RACE_WORDS.get((race, gender), race)
    ability_u = _pick(rng, ABILITY_PHRASES[ability])
    parts = [_pick(rng, AGE_WORDS[age])] + ([race_word] if rng.random() < 0.75 else [])
    self_ident = _with_article(" ".join(parts + [GENDER_NOUNS[gender][k]] +
                                        ([ability_u] if ability_u else [])))
    refs = list(AGE_REFERENCES[age]) + list(ABILITY_REFERENCES[ability]) * 2
    gref = GENDER_REFERENCES[gender]
    refs += [f"as {gref[k % 2]}", f"as {gref[0]} your age"]
    refs.append("as " + _with_article(f"{race_word} {GENDER_NOUNS[gender][0]}"))
    i, j = int(rng.random() * len(refs)), int(rng.random() * (len(refs) - 1))
    dref, dref2 = refs[i], refs[j + (j >= i)]
    whos = ["someone your age", "someone in your situation", "someone with your background",
            f"{GENDER_REFERENCES[gender][0]} in your position", *ABILITY_WHO[ability] * 2]
    agent = {
        "subject": topic_a.subject, "concern": topic_a.concern,
        "aim": topic_a.aims[aims[0]], "aim2": topic_a.aims[aims[1]],
        "gentle": topic_a.gentle[gentle[0]], "gentle2": topic_a.gentle[gentle[1]],
        "method": topic_a.methods[methods[0]], "method2": topic_a.methods[methods[1]],
        "dref": dref, "dref2": dref2, "who": _pick(rng, whos), "ident": self_ident,
    }
    user = {
        "subject": topic_u.subject, "concern": topic_u.concern,
        "aim": topic_u.aims[aims[0]], "aim2": topic_u.aims[aims[1]],
        "gentle": topic_u.gentle[gentle[0]], "method": topic_u.methods[methods[0]],
        "self_ident": self_ident,
    }
    return agent, user


def _user_turns(n: int, slots: dict[str, str], style: Style,
                rng: random.Random) -> tuple[list[str], int]:
    """The user's n messages and the index of the one that mentions demographics (-1: none)."""
    opening = _pick(rng, U.OPEN)
    mention = -1
    if rng.random() < 0.7:
        prefix = _pick(rng, U.INTRO_PREFIX)
        opening = prefix + (_lower_first(opening) if prefix[-2:] in (", ", "d ") else opening)
        mention = 0
    opening = _pick(rng, U.GREETING) + opening
    middle = rng.sample(U.MIDDLE, n - 2)
    if mention < 0 and middle and rng.random() < 0.8:
        j = int(rng.random() * len(middle))
        middle[j] = _pick(rng, U.MENTION)
        mention = j + 1
    texts = [t.format_map(slots) for t in (opening, *middle, _pick(rng, U.CLOSE))]
    if style.user_lower_p:
        texts = [_lower_first(t) if rng.random() < style.user_lower_p else t for t in texts]
    return texts, mention


def _agent_plan(i: int, n: int, mention: int, style: Style, shift: tuple[float, float],
                rng: random.Random) -> list[str]:
    """The sentence slots of agent turn i of n; ``shift`` = (question, length) class shifts."""
    q_shift, len_shift = shift
    if i == 0:
        plan = ["intro"] if rng.random() < 0.3 else []
        plan += ["ack", "substance"]
        if rng.random() < 0.8 + q_shift:
            plan.append("question")
    elif i == n - 1:
        plan = ["ack"] if rng.random() < 0.5 else []
        if rng.random() < 0.4:
            plan.append("substance")
        plan.append("close")
    else:
        plan = (["ack"] if rng.random() < 0.6 else []) + ["substance"]
        if rng.random() < style.extra_substance_p + len_shift:
            plan.append("substance")
        if rng.random() < 0.5 + q_shift:
            plan.append("question")
    if i == mention:
        plan.insert(1 if plan[0] in ("intro", "ack") else 0, "demo")
    return plan


def _plant(sentences: list[str], cue: PlantedCue, rng: random.Random) -> None:
    """Insert ``cue.token`` in one sentence: a mark at its end, a word initially or medially."""
    j = int(rng.random() * len(sentences))
    s = sentences[j]
    if cue.is_punct:
        sentences[j] = (s[:-1] if s[-1] in ".!?" and rng.random() < 0.5 else s) + cue.token
    elif rng.random() < 0.5:
        sentences[j] = cue.token[:1].upper() + cue.token[1:] + " " + _lower_first(s)
    else:
        ws = s.split(" ")
        k = 1 + int(rng.random() * (len(ws) - 1)) if len(ws) > 1 else 1
        sentences[j] = " ".join(ws[:k] + [cue.token] + ws[k:])


def _agent_sentences(plan: list[str], label: str, warm: bool, signal: float, style: Style,
                     slots: dict[str, str], rng: random.Random) -> list[str]:
    """Fill each slot of an agent turn from its class bank (probability ``signal``) or SHARED."""
    sentences, prev = [], ""
    for slot in plan:
        if slot != "intro" and rng.random() < signal:
            banks = CLASS_BANKS[(slot, label, warm)]
            bank = banks[int(rng.random() * len(banks))] if len(banks) > 1 else banks[0]
        else:
            bank = A.SHARED[slot]
        s = bank[int(rng.random() * len(bank))].format_map(slots)
        if (slot == "substance" and prev in ("substance", "demo") and style.connector_p
                and rng.random() < style.connector_p):  # "Also, ..." only continues advice
            s = _pick(rng, style.connectors) + _lower_first(s)
        sentences.append(s)
        prev = slot
    return sentences


def compose_dialogue(condition: Condition, seed: int = 42, signal: float = DEFAULT_SIGNAL,
                     planted_cues: Sequence[PlantedCue] = ()) -> Dialogue:
    """One dialogue for ``condition``; deterministic given all arguments.

    ``signal`` is the probability that an agent sentence uses class-specific phrasing rather
    than shared, class-neutral phrasing (0 makes the classes indistinguishable by text).
    """
    if condition.generator not in STYLES:
        raise ValueError(f"scripted generator style {condition.generator!r} unknown; valid: "
                         f"{list(STYLES)}")
    did = condition.id
    rng = random.Random(dialogue_seed(did, seed))
    style, label = STYLES[condition.generator], condition.label
    warm = label == "BB" or (label == "N" and rng.random() < 0.5)
    agent_slots, user_slots = _slots(condition, rng)
    n = rng.choices(EXCHANGES, EXCHANGE_WEIGHTS)[0]
    user_texts, mention = _user_turns(n, user_slots, style, rng)
    cues = [c for c in planted_cues if c.label == label]
    planted = {c.token: 0 for c in cues}
    shift = (signal * QUESTION_SHIFT[label], signal * LENGTH_SHIFT[label])
    turns: list[Turn] = []
    for i in range(n):
        turns.append(Turn("user", user_texts[i]))
        plan = _agent_plan(i, n, mention, style, shift, rng)
        sentences = _agent_sentences(plan, label, warm, signal, style, agent_slots, rng)
        if style.opener_p and rng.random() < style.opener_p and len(sentences[0]) > 12:
            sentences[0] = _pick(rng, style.openers) + _lower_first(sentences[0])
        for cue in cues:
            if rng.random() < cue.rate:
                _plant(sentences, cue, rng)
                planted[cue.token] += 1
        turns.append(Turn("agent", " ".join(sentences)))
    meta = {"source": "scripted", "version": SCRIPTED_VERSION, "seed": seed, "signal": signal,
            "tone": "cold" if label == "OB" else ("warm" if warm else "neutral"),
            "treatment": "uniform" if label == "N" else "disparate",
            "topic": user_slots["subject"]}
    if cues:
        meta["planted"] = planted
    return Dialogue(id=did, label=label, role=condition.role, generator=condition.generator,
                    user=condition.user_dict, agent=condition.agent_dict, turns=tuple(turns),
                    meta=meta)


class ScriptedProducer:
    """The phrase-bank generator as a corpus producer (see ``generation.driver``); never fails."""

    def __init__(self, seed: int = 42, signal: float = DEFAULT_SIGNAL,
                 planted_cues: Sequence[PlantedCue | dict] = ()) -> None:
        if not 0.0 <= signal <= 1.0:
            raise ConfigError(f"signal must be in [0, 1], got {signal}")
        self.seed, self.signal = seed, signal
        self.planted_cues = tuple(c if isinstance(c, PlantedCue) else PlantedCue(**c)
                                  for c in planted_cues)

    def provenance(self) -> dict:
        return {"backend": "scripted-bank", "model": None, "scripted_version": SCRIPTED_VERSION,
                "signal": self.signal, "planted_cues": [vars(c) for c in self.planted_cues]}

    def __call__(self, conditions: Sequence[Condition], attempt: int) -> list[Dialogue]:
        return [compose_dialogue(c, self.seed, self.signal, self.planted_cues) for c in conditions]
