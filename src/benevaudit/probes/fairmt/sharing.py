"""Which request serves each dialogue at each turn, and what a dry run records of it.

Dialogues whose first k user turns are equal send one turn-k request between them (the target's
replies to equal histories are equal: every backend decodes a request from its own seed), so
``batched_chat`` asks it once. Of FairMT-1K's 990 dialogues, 345 open with a turn an earlier
dialogue of the list opened with. The request is recorded under the first such dialogue's id;
a later turn's request waits for the request its history extends, which may be recorded under
another dialogue's id (``reads``), and a judge request waits for the request whose reply it
reads. Judge requests are the same request only where their prompt and the request they read
are: two replies equal only as a dry run's placeholders are two requests.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benevaudit.probes.fairmt.release import TURNS, Dialogue

Served = list[list[int]]     # [turn - 1][dialogue] -> the dialogue whose request serves it


def served(dialogues: Sequence[Dialogue]) -> Served:
    """For each turn, the first dialogue in the list with the same first k user turns."""
    out: Served = []
    for k in range(1, TURNS + 1):
        first: dict[tuple[str, ...], int] = {}
        out.append([first.setdefault(d.turns[:k], i) for i, d in enumerate(dialogues)])
    return out


def firsts(keys: Sequence[Any]) -> list[int]:
    """The positions of each key's first occurrence, in order: the requests actually sent."""
    seen: dict[Any, int] = {}
    return [seen.setdefault(key, i) for i, key in enumerate(keys) if key not in seen]


def target_identity(dialogues: Sequence[Dialogue], served_by: Served, turn: int, i: int
                    ) -> dict[str, Any]:
    """The turn-``turn`` request serving dialogue ``i``, as a dry run records it (its turn
    comes from the wave's scope)."""
    owner = dialogues[served_by[turn - 1][i]]
    return {"turn": turn, "id": owner.id, "task": owner.task}


def expected_wave(dialogues: Sequence[Dialogue], served_by: Served, turn: int
                  ) -> tuple[list[int], list[dict[str, Any]]]:
    """The dialogues that send turn ``turn``'s requests, and each request's identity: its
    dialogue, and from turn 2 on the request whose reply its history holds."""
    senders = sorted(set(served_by[turn - 1]))
    identities = []
    for i in senders:
        ident: dict[str, Any] = {"id": dialogues[i].id, "task": dialogues[i].task}
        if turn > 1:
            ident["reads"] = target_identity(dialogues, served_by, turn - 1, i)
        identities.append(ident)
    return senders, identities


def judge_keys(systems: Sequence[str], owners: Sequence[int]) -> list[str]:
    """What makes two judge requests the same: their prompt and the request whose reply they
    read (``owners``: the dialogue whose request served each at the judged turn)."""
    return [json.dumps([system, owner]) for system, owner in zip(systems, owners, strict=True)]
