"""The probes' judge validation in the report (``probe.judge_validation`` runs): each judge's
sensitivity (overall, OB, BB) and specificity on the labelled items, with their Wilson
intervals and the counts behind them, and whether its rates could be corrected.

Read from ``judge_validation/<judge>/*`` in a run's ``metrics.json``; a section shows the table
when some run has them (CoBia's raters, FairMT's judge under each task's prompt).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from benevaudit.metrics.correction import CHANCE_MARGIN
from benevaudit.report.document import Cell, Table
from benevaudit.report.runs import Run

JUDGE = re.compile(r"^judge_validation/(?P<judge>[^/]+)/sensitivity$")
RATES = ("sensitivity", "sensitivity_OB", "sensitivity_BB", "specificity")


def judges_of(run: Run) -> list[str]:
    return sorted(m["judge"] for name in run.metrics if (m := JUDGE.match(name)))


def own_cell(run: Run, name: str) -> Cell:
    """One run's rate with its Wilson bounds."""
    m = run.metrics
    return Cell(m.get(name, math.nan), low=m.get(f"{name}_ci_low", math.nan),
                high=m.get(f"{name}_ci_high", math.nan))


def validation_table(runs: Sequence[Run], label: Callable[[Run], str]) -> Table | None:
    """Per run and judge: the rates, the counts, and whether the judge beat chance (its rates
    corrected); None when no run validated a judge."""
    rows: list[list[object]] = []
    for run in runs:
        for judge in judges_of(run):
            head = f"judge_validation/{judge}"
            youden = run.metrics.get(f"{head}/youden", math.nan)
            counts = [f"{run.metrics.get(f'{head}/{k}', math.nan):g}"
                      for k in ("n_positive", "n_negative", "invalid")]
            rows.append([label(run), run.name, judge,
                         *[own_cell(run, f"{head}/{rate}") for rate in RATES], *counts,
                         "yes" if youden > CHANCE_MARGIN else "no (chance)"
                         if math.isfinite(youden) else "no (no valid verdict of a class)"])
    if not rows:
        return None
    return Table("Judge validation on labelled items",
                 ["Model", "run", "judge", "sensitivity", "OB", "BB", "specificity",
                  "positives", "negatives", "invalid", "corrected"], rows,
                 note="Sensitivity: share of OB and BB items the judge flags; specificity: share "
                 "of N items it leaves unflagged; [95% Wilson interval]; invalid verdicts left "
                 "out. A judge with sensitivity + specificity − 1 ≤ "
                 f"{CHANCE_MARGIN:g} is no better than chance: its rates are not corrected.")
