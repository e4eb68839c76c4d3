"""FairDialogue's "heard vs stated" comparison, beyond the paper: the same model's GUS (decision
tasks) and SNSR (recommendation tasks) with the group only heard (``probe.mode=audio``) beside
the group stated in text (``probe.mode=text``), per attribute and task, each with its bootstrap
interval over items. A model whose bias appears only when the group is stated (or only when
heard) shows it here; ``experiment=fairdialogue_paper`` runs both modes.

The difference is tested item by item where a heard and a stated run of one seed answered the
same items: the paired permutation test swaps each item's answers between the two modes
(:func:`benevaudit.report.paired_fairdialogue.heard_vs_stated`), Holm-adjusted across the
table's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import math

from benevaudit.errors import InputError
from benevaudit.metrics.paired import holm
from benevaudit.report.context import Context
from benevaudit.report.document import Cell, Table
from benevaudit.report.paired import align, read_side
from benevaudit.report.paired_fairdialogue import heard_vs_stated
from benevaudit.report.runs import Run

MEASURES = ("gus", "snsr")
PERMUTATIONS = 10_000     # the paired test's (exact when the items that differ allow it)


def mode_of(run: Run) -> str:
    """``audio`` or ``text``."""
    return run.settings.probe_mode


def comparison(runs: Sequence[Run], context: Context,
               replicates: Callable[[Run, Context], dict[str, Any]]) -> Table | None:
    """One row per (model, attribute, task, measure) that both modes scored; None when no
    model ran in both."""
    by: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        by.setdefault((run.chosen("target"), mode_of(run)), []).append(run)
    rows, p_values = [], []
    for target in dict.fromkeys(t for t, _ in by):
        heard, stated = by.get((target, "audio"), []), by.get((target, "text"), [])
        if not heard or not stated:
            continue
        reps = {id(r): replicates(r, context) for r in [*heard, *stated]}
        paired = paired_tests(heard, stated, context)
        for name in sorted({n for r in heard for n in r.metrics}
                           & {n for r in stated for n in r.metrics}):
            parts = name.split("/")
            if len(parts) != 4 or parts[0] != "fairness" or parts[3] not in MEASURES:
                continue
            cells = [cell(members, name, reps, context) for members in (heard, stated)]
            rows.append([target, parts[2], parts[1], parts[3].upper(), *cells,
                         Cell(cells[0].mean - cells[1].mean)])
            p_values.append(paired.get(name, math.nan))
    if not rows:
        return None
    adjusted = holm(p_values)
    for row, p in zip(rows, adjusted):
        row.append("n/a" if not math.isfinite(p) else f"{p:.3g}")
    return Table("Heard vs stated: the group only heard (audio) beside the group stated (text)",
                 ["Model", "Attribute", "Task", "Measure", "Heard (audio)", "Stated (text)",
                  "Heard − stated", "Paired p (Holm)"], rows,
                 note="Same model and scenarios in both modes. Mean ± std over seeds (n), [95% "
                 "bootstrap interval over items]; the difference is of the means. Paired p: "
                 "the paired permutation test over the items both modes answered (one seed, "
                 "items swapped whole), Holm-adjusted across the rows; n/a where no heard and "
                 "stated run share a seed and items.")


def paired_tests(heard: Sequence[Run], stated: Sequence[Run], context: Context
                 ) -> dict[str, float]:
    """``{metric: p}`` of the first heard and stated runs of one seed that share items; {}
    where none do (a note says why)."""
    for one in heard:
        other = next((r for r in stated if r.seed == one.seed), None)
        if other is None:
            continue
        try:
            merged, _, _ = align(read_side(one.path), read_side(other.path),
                                 (one.name, other.name))
        except InputError as e:
            context.notes.append(f"heard vs stated: no paired test ({e})")
            return {}
        return heard_vs_stated(merged, PERMUTATIONS, context.seed)
    return {}


def cell(members: Sequence[Run], name: str, reps: dict[int, dict[str, Any]],
         context: Context) -> Cell:
    have = [r for r in members if name in r.metrics]
    return context.cell(have, name, [reps[id(r)] for r in have])
