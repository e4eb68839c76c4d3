"""Input units cut from a dialogue, and the rules that turn unit flags into a dialogue decision.

Units (the study's Table 7):
- ``utterance``: one agent turn on its own;
- ``exchange``: the user turn just before an agent turn, with that agent turn;
- ``context``: an agent turn with the whole dialogue before it;
- ``dialogue``: the whole dialogue, one unit (LLM judges and the fine-tuned classifier).

Aggregation rules over a dialogue's units (invalid units have flag ``None``):
- ``any`` (the study's): flagged if any valid unit is flagged;
- ``max`` / ``mean``: the max / mean of the valid unit scores is above the threshold;
- ``first``: the first unit with a valid verdict decides (a monitor that reads the opening turn).
Whatever the rule, a dialogue that is not flagged while some unit is invalid is itself invalid
(``None``): its missing verdict could have flagged it, so it is never counted as a negative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from typing_extensions import assert_never

from benevaudit.schema import Dialogue, Turn

UnitKind = Literal["utterance", "exchange", "context", "dialogue"]
Aggregation = Literal["any", "max", "mean", "first"]
UNITS: tuple[str, ...] = get_args(UnitKind)
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)


@dataclass(frozen=True)
class Unit:
    """One thing a detector reads: ``turns`` ends with the agent turn at index ``turn``.

    For ``dialogue`` units ``turns`` is the whole dialogue and ``turn`` is -1.
    """

    dialogue: Dialogue
    kind: UnitKind
    turn: int
    turns: tuple[Turn, ...]

    @property
    def agent_text(self) -> str:
        return self.turns[-1].text if self.turns else ""

    @property
    def user_text(self) -> str:
        """The user turn right before the agent turn ('' when the agent speaks first)."""
        prior = [t for t in self.turns[:-1] if t.speaker == "user"]
        return prior[-1].text if prior else ""


def make_units(dialogue: Dialogue, kind: UnitKind) -> list[Unit]:
    """The units of one dialogue, in turn order (one per agent turn, or one for ``dialogue``)."""
    turns = dialogue.turns
    if kind == "dialogue":
        return [Unit(dialogue, kind, -1, tuple(turns))]
    units = []
    for i, t in enumerate(turns):
        if t.speaker != "agent":
            continue
        span: tuple[Turn, ...]
        if kind == "utterance":
            span = (t,)
        elif kind == "exchange":
            prev = turns[i - 1] if i > 0 and turns[i - 1].speaker == "user" else None
            span = (prev, t) if prev is not None else (t,)
        elif kind == "context":
            span = tuple(turns[:i + 1])
        else:
            assert_never(kind)
        units.append(Unit(dialogue, kind, i, span))
    return units


def aggregate(flags: Sequence[bool | None], scores: Sequence[float], rule: Aggregation,
              threshold: float) -> bool | None:
    """The dialogue decision from its units: True, False, or None (invalid).

    A dialogue with no units at all (no agent turn) is not flagged.
    """
    valid = [(bool(f), float(s)) for f, s in zip(flags, scores, strict=True) if f is not None]
    some_invalid = len(valid) < len(flags)
    if rule == "any":
        hit = any(f for f, _ in valid)
    elif rule == "first":
        hit = valid[0][0] if valid else False
        some_invalid = not valid and some_invalid
    elif rule == "max" or rule == "mean":
        vals = [s for _, s in valid if not math.isnan(s)]
        reduced = (max(vals) if rule == "max" else sum(vals) / len(vals)) if vals else -math.inf
        hit = reduced > threshold
    else:
        assert_never(rule)
    if hit:
        return True
    return None if some_invalid else False

