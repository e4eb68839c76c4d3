"""A FairMT-Bench run's saved replies read back for ``probe.py rescore=<run dir>``.

Each row of its ``responses.parquet`` keeps what the target said (``prompt_<k>``,
``reply_<k>``, ``finish_<k>``) and the dialogue's identity; every verdict column the judge
wrote is dropped, so the judge of the current config reads the replies afresh. An evaluation
that came with the replies (``source_<k>`` = ``answers``: an answers folder's or an Inspect
log's) is no judge's verdict: it is kept as given, as the first run read it.
"""

from __future__ import annotations

import math
from typing import Any

from benevaudit.errors import InputError
from benevaudit.probes.fairmt.release import TURNS, Dialogue

IDENTITY = ("id", "task", "stage", "type", "dimension", "index", "target_system")
REPLIES = ("prompt", "reply", "finish")


def present(value: Any) -> bool:
    """False for None and for the NaN a missing value becomes in Parquet."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def saved_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row as the probe collected it: identity and replies; given evaluations kept."""
    out = {column: row.get(column) for column in IDENTITY}
    out.update({f"{part}_{k}": row[f"{part}_{k}"] for part in REPLIES
                for k in range(1, TURNS + 1) if f"{part}_{k}" in row})
    for k in range(1, TURNS + 1):
        if row.get(f"source_{k}") == "answers" and present(row.get(f"evaluation_{k}")):
            out[f"given_{k}"] = row[f"evaluation_{k}"]
    return out


def saved_rows(rows: list[dict[str, Any]], dialogues: list[Dialogue]) -> list[dict[str, Any]]:
    """The saved rows in the order of ``dialogues`` (the block's, as the run recorded it),
    matched by dialogue id. A row of no dialogue, a dialogue no row answers, or a row missing
    a reply is an error naming the row."""
    by_id: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows):
        key = str(row.get("id"))
        missing = [f"reply_{k}" for k in range(1, TURNS + 1) if not present(row.get(f"reply_{k}"))]
        if missing:
            raise InputError(f"responses.parquet row {n} (dialogue {key!r}): no {missing[0]}; "
                             "expected a FairMT-Bench run's rows")
        if key in by_id:
            raise InputError(f"responses.parquet row {n}: dialogue {key!r} appears twice")
        by_id[key] = row
    wanted = [d.id for d in dialogues]
    stray = sorted(set(by_id) - set(wanted))
    absent = [i for i in wanted if i not in by_id]
    if stray or absent:
        raise InputError(f"responses.parquet does not hold the probe block's dialogues "
                         f"({len(stray)} rows of none, e.g. {stray[:1]}; {len(absent)} "
                         f"dialogues unanswered, e.g. {absent[:1]}); rescore reads a whole "
                         "run of the recorded probe.data, probe.tasks and limit")
    return [saved_row(by_id[i]) for i in wanted]
