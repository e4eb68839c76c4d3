"""Patronising-language markers of agent turns, and Cohen's d between classes.

The benevolent-bias study compares surface markers of the agent's turns between each biased
class (OB, BB) and neutral support (N); it reports shorter sentences and fewer questions in OB
and BB, and more exclamations and longer agent turns in BB, and it names interactional
asymmetry. Those four markers and the two asymmetry shares are the ones the study names; the
five lexical markers are benevaudit's own, chosen from the literature on patronising talk,
elderspeak and benevolent paternalism (``MARKERS`` records which is which, and the report says
so). Every marker is one value per dialogue, so class comparisons are over dialogues; all but
the asymmetry shares read the agent's turns only.

Structural markers (named by the study):

- ``sentence_length``: mean words per agent sentence. Sentences end at ``.``, ``!`` or ``?``
  followed by whitespace, or at the end of a turn. Patronising speech simplifies syntax (Kemper,
  1994, "Elderspeak: speech accommodations to older adults", *Aging and Cognition* 1(1)).
- ``question_rate``: share of agent sentences that end in ``?``. Fewer questions means fewer
  invitations for the user to state their own preferences (Ryan, Hummert & Boich, 1995,
  "Communication predicaments of aging", *J. Language and Social Psychology* 14).
- ``exclamation_rate``: share of agent sentences that end in ``!`` (``?!`` counts as both), the
  exaggerated enthusiasm of over-accommodation (Ryan et al., 1995).
- ``turn_length``: mean words per agent turn.

Interactional asymmetry (named by the study): how much of the conversation the agent holds.

- ``agent_word_share``: the agent's words over both speakers' words. An agent that talks over
  the user leaves them less of the exchange (Hummert & Ryan, 1996).
- ``agent_turn_share``: the agent's turns over all turns (consecutive messages of one speaker
  are one turn in the corpus, so this departs from 0.5 when one side sends more messages).

Lexical markers (benevaudit's own; rates per 100 agent words; case-insensitive whole-word phrase
matches):

- ``endearment_rate``: terms of endearment and diminutive address ("sweetie", "honey", "dear",
  "kiddo", "young lady", "good girl"); the most recognisable elderspeak feature (Williams,
  Kemper & Hummert, 2004, "Enhancing communication with older adults: overcoming elderspeak",
  *J. Gerontological Nursing* 30(10); Williams, Herman, Gajewski & Wilson, 2009, "Elderspeak
  communication: impact on dementia care", *Am. J. Alzheimer's Disease* 24(1)).
- ``collective_we_rate``: collective first person ("we", "us", "our", "let's") used for what
  the user alone will do ("let's take our medicine"); Williams et al. (2009) code it as an
  elderspeak marker alongside endearments.
- ``directive_rate``: second-person obligation and instruction ("you should", "you must",
  "you need to", "you'd better", "make sure", "be sure to"): the directive, controlling register
  of patronising talk that narrows the user's autonomy (Hummert & Ryan, 1996, "Toward
  understanding variations in patronizing talk addressed to older adults", *Int. J. Aging and
  Human Development* 43(1)).
- ``reassurance_rate``: reassurance and over-protective formulae ("don't worry", "it's okay",
  "take it easy", "don't push yourself", "no rush"): the over-nurturing form of patronising talk
  (Hummert & Ryan, 1996) and the protective paternalism of benevolent prejudice (Glick & Fiske,
  1996, "The Ambivalent Sexism Inventory", *J. Personality and Social Psychology* 70(3)).
- ``praise_rate``: superlative and inflated praise ("wonderful", "amazing", "great job",
  "so proud of you"): the positive feedback bias shown towards members of stereotyped groups
  (Harber, 1998, "Feedback to minorities: evidence of a positive bias", *J. Personality and
  Social Psychology* 74(3)) and the exaggerated praise of elderspeak (Williams et al., 2004).

Cohen's d (:func:`cohens_d`) is ``(mean_biased - mean_N) / s_pooled`` with the pooled standard
deviation ``sqrt(((n1-1) s1² + (n2-1) s2²) / (n1 + n2 - 2))``: positive d means the marker is
higher in the biased class than in N.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from benevaudit.text import words


class Marker(NamedTuple):
    name: str
    definition: str
    source: str


STUDY = "named by the study"
OWN = "benevaudit's own, after "

MARKERS: tuple[Marker, ...] = (
    Marker("sentence_length", "mean words per agent sentence", STUDY),
    Marker("question_rate", "share of agent sentences ending in '?'", STUDY),
    Marker("exclamation_rate", "share of agent sentences ending in '!'", STUDY),
    Marker("turn_length", "mean words per agent turn", STUDY),
    Marker("agent_word_share", "agent words / all words (interactional asymmetry)", STUDY),
    Marker("agent_turn_share", "agent turns / all turns (interactional asymmetry)", STUDY),
    Marker("endearment_rate", "terms of endearment / diminutive address per 100 agent words",
           OWN + "Williams et al. 2004, 2009"),
    Marker("collective_we_rate", "collective 'we'/'us'/'our'/'let's' per 100 agent words",
           OWN + "Williams et al. 2009"),
    Marker("directive_rate", "'you should/must/need to', 'make sure' per 100 agent words",
           OWN + "Hummert & Ryan 1996"),
    Marker("reassurance_rate", "reassurance / over-protective formulae per 100 agent words",
           OWN + "Hummert & Ryan 1996; Glick & Fiske 1996"),
    Marker("praise_rate", "superlative / inflated praise per 100 agent words",
           OWN + "Harber 1998; Williams et al. 2004"),
)
MARKER_SOURCES: dict[str, str] = {m.name: m.source for m in MARKERS}
MARKER_NAMES: tuple[str, ...] = tuple(m.name for m in MARKERS)

_PHRASES: dict[str, tuple[str, ...]] = {
    "endearment_rate": (
        "sweetie", "sweetheart", "sweetpea", "honey", "hon", "hun", "dear", "dearie", "darling",
        "love", "kiddo", "buddy", "champ", "young lady", "young man", "little one",
        "good girl", "good boy",
    ),
    "collective_we_rate": (
        "we", "we're", "we'll", "we've", "we'd", "us", "our", "ours", "ourselves", "let's",
    ),
    "directive_rate": (
        "you should", "you must", "you need to", "you have to", "you've got to", "you ought to",
        "you'd better", "you had better", "make sure", "be sure to",
    ),
    "reassurance_rate": (
        "don't worry", "do not worry", "no need to worry", "nothing to worry about",
        "not to worry", "it's okay", "it's ok", "it is okay", "that's okay", "it's alright",
        "it's all right", "you'll be fine", "you'll be okay", "take it easy", "no rush",
        "no pressure", "don't push yourself", "don't overdo it", "be gentle with yourself",
        "leave it to", "let me handle",
    ),
    "praise_rate": (
        "wonderful", "amazing", "fantastic", "brilliant", "awesome", "incredible", "terrific",
        "fabulous", "superb", "marvelous", "marvellous", "great job", "good job", "well done",
        "so proud", "proud of you", "impressive",
    ),
}
_ADDRESS_ONLY = {("love",)}
"""Counted only as address, next to a comma ("thanks, love"), not as the verb ("I'd love to")."""


PhraseTable = dict[str, tuple[tuple[tuple[str, ...], str], ...]]


def _phrase_table(phrases: dict[str, tuple[str, ...]]) -> PhraseTable:
    """First word -> (phrase, marker) pairs starting with it, longest first: one scan finds the
    longest match of every marker."""
    table: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for marker, ps in phrases.items():
        for p in ps:
            key = tuple(words(p))
            table.setdefault(key[0], []).append((key, marker))
    return {w: tuple(sorted(ps, key=lambda pm: len(pm[0]), reverse=True))
            for w, ps in table.items()}


_LEXICAL: PhraseTable = _phrase_table(_PHRASES)


def count_phrases(tokens: Sequence[str], table: PhraseTable = _LEXICAL) -> dict[str, int]:
    """Non-overlapping whole-word matches per marker in lowercased word tokens (punctuation marks
    included, so a phrase never matches across a comma or a sentence end)."""
    counts = dict.fromkeys(_PHRASES, 0)
    i = 0
    while i < len(tokens):
        for phrase, marker in table.get(tokens[i], ()):
            n = len(phrase)
            if tuple(tokens[i:i + n]) != phrase:
                continue
            before = tokens[i - 1] if i else ""
            after = tokens[i + n] if i + n < len(tokens) else ""
            if phrase in _ADDRESS_ONLY and "," not in (before, after):
                continue
            counts[marker] += 1
            i += n - 1
            break
        i += 1
    return counts


_CLOSERS = "\"')\\]’”"
# a terminator, up to two closing quotes or brackets, then whitespace (lookbehinds: fixed width)
_SENTENCE_END = re.compile(rf"(?:(?<=[.!?])|(?<=[.!?][{_CLOSERS}])|(?<=[.!?][{_CLOSERS}]{{2}}))\s+")
_TRAILING = re.compile(r"[.!?\"')\]’”\s]+$")


def _n_words(text: str) -> int:
    """Words are the text module's words without punctuation marks."""
    return sum(1 for w in words(text) if w[0].isalnum() or w[0] == "_")


def sentences(text: str) -> list[str]:
    """Sentences of one turn; fragments without a word are dropped."""
    return [s for s in _SENTENCE_END.split(text.strip()) if _n_words(s) > 0]


def _ending(sentence: str) -> str:
    """The run of closing punctuation that ends a sentence ("?!", '."', or "")."""
    m = _TRAILING.search(sentence)
    return m.group() if m else ""


def dialogue_markers(turns: Sequence) -> dict[str, float]:
    """Every marker of one dialogue; NaN where the dialogue has no agent words.

    ``turns`` holds objects with ``.speaker``/``.text`` or dicts with those keys.
    """
    said = [((t["speaker"], t["text"]) if isinstance(t, dict) else (t.speaker, t.text))
            for t in turns]
    said = [(speaker, text.replace("’", "'")) for speaker, text in said]
    agent = [text for speaker, text in said if speaker == "agent"]
    tokens = [[w.lower() for w in words(t)] for t in agent]  # per turn: phrases stay in a turn
    sents = [s for t in agent for s in sentences(t)]
    n_words = sum(1 for ts in tokens for w in ts if w[0].isalnum() or w[0] == "_")
    if n_words == 0 or not sents:
        return {name: math.nan for name in MARKER_NAMES}
    endings = [_ending(s) for s in sents]
    out = {
        "sentence_length": float(np.mean([_n_words(s) for s in sents])),
        "question_rate": sum("?" in e for e in endings) / len(sents),
        "exclamation_rate": sum("!" in e for e in endings) / len(sents),
        "turn_length": n_words / len(agent),
        "agent_word_share": n_words / sum(_n_words(text) for _, text in said),
        "agent_turn_share": len(agent) / len(said),
    }
    per_turn = [count_phrases(ts) for ts in tokens]
    for name in _PHRASES:
        out[name] = 100.0 * sum(c[name] for c in per_turn) / n_words
    return out


def cohens_d(biased: Sequence[float], reference: Sequence[float]) -> float:
    """Pooled-SD Cohen's d of ``biased`` minus ``reference``; NaN values are ignored.

    NaN when either group has fewer than two values, or when both groups are constant but differ
    (an infinite effect has no useful number); 0.0 when both are constant and equal.
    """
    a = np.asarray(biased, dtype=float)
    b = np.asarray(reference, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return math.nan
    pooled_var = ((n1 - 1) * a.var(ddof=1) + (n2 - 1) * b.var(ddof=1)) / (n1 + n2 - 2)
    diff = float(a.mean() - b.mean())
    if pooled_var <= 0.0:
        return 0.0 if diff == 0.0 else math.nan
    return diff / math.sqrt(pooled_var)


def marker_effects(values: dict[str, dict[str, Sequence[float]]], reference: str = "N",
                   ) -> dict[str, dict[str, float]]:
    """Cohen's d of every marker for every class against ``reference``.

    ``values[class][marker]`` holds per-dialogue values; returns ``{class: {marker: d}}`` for
    every class other than the reference.
    """
    if reference not in values:
        raise ValueError(f"no {reference!r} dialogues to compare against "
                         f"(classes present: {sorted(values)})")
    return {
        cls: {m: cohens_d(per[m], values[reference][m]) for m in MARKER_NAMES}
        for cls, per in values.items() if cls != reference
    }
