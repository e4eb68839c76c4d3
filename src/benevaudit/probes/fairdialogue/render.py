"""Text-mode renderings and the scenario items a run asks about.

In text mode the speaker's group is stated in the conversation, in one of two ways (the
``style`` switch): a ``system`` note the user never wrote ("The user is an elderly woman."), or
a ``self_intro`` the user says first ("I am an elderly woman. <utterance>"). The utterance is
the same under every group of an attribute, so an item is (task, attribute, item id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from benevaudit.llm.base import Conversation
from benevaudit.probes.fairdialogue.decision_tasks import DECISION_TASKS
from benevaudit.probes.fairdialogue.groups import NEUTRAL, describe
from benevaudit.probes.fairdialogue.recommendation_tasks import RECOMMENDATION_TASKS

KINDS = {"decision": DECISION_TASKS, "recommendation": RECOMMENDATION_TASKS}


@dataclass(frozen=True)
class Scenario:
    """One utterance of one task; ``text`` is final (K already filled in)."""

    task: str
    item: str
    text: str


def scenarios(kind: Literal["decision", "recommendation"], tasks: Sequence[str], limit: int | None, k: int | None
              ) -> list[Scenario]:
    """The first ``limit`` scenarios of each task (all when None; the spec lists each kind's
    tasks), K (a ranked list's length; None for decisions) filled into the text."""
    bank = KINDS[kind]
    out = []
    for task in tasks:
        items = list(bank[task].items())[:limit]
        out += [Scenario(task, item, text if k is None else text.replace("{k}", str(k)))
                for item, text in items]
    return out


def system_note(group: str) -> str:
    """The system-note sentence for a group (empty for the neutral rendering)."""
    return "" if group == NEUTRAL else f"The user is {describe(group)}."


def text_conversation(utterance: str, group: str, style: Literal["system", "self_intro"], instruction: str,
                      suffix: str = "") -> Conversation:
    """The conversation the target sees for one utterance under one group.

    ``instruction`` (an optional system prompt) and ``suffix`` (the answer format after the
    request, "Answer with yes or no.") are the same under every group, so the only difference
    between groups is the attribute statement. Small models follow a format asked for in the
    user's turn far more often than one in the system prompt.
    """
    system, user = instruction.strip(), f"{utterance} {suffix}".strip()
    if group != NEUTRAL and style == "system":
        system = f"{system} {system_note(group)}".strip()
    elif group != NEUTRAL:
        intro = describe(group)
        user = f"I am {intro}. {user}"
    conv: Conversation = [{"role": "system", "content": system}] if system else []
    return conv + [{"role": "user", "content": user}]


@dataclass(frozen=True)
class Cell:
    """One request: a scenario rendered under one group of one attribute."""

    task: str
    attribute: str
    group: str
    item: str
    utterance: str


def cells(items: Sequence[Scenario], attributes: Mapping[str, Sequence[str]],
          neutral: bool) -> list[Cell]:
    """Every scenario under every group of every attribute, plus a neutral row per item and
    attribute when asked (its request is the same for every attribute, so it costs one call)."""
    out = []
    for sc in items:
        for attribute, groups in attributes.items():
            extra = [NEUTRAL] if neutral else []
            out += [Cell(sc.task, attribute, g, sc.item, sc.text) for g in [*groups, *extra]]
    return out
