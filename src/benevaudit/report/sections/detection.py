"""Detection (``detect.py`` runs, the study's Table 3): binary B-vs-N detection and per-class
trigger rates of each detector, with the overt–benevolent gap Δ = TR_OB − TR_BB.

One row per detector configuration (seeds aggregated). Intervals: bootstrap over the run's
dialogues in ``predictions.parquet`` (``flagged``, else pred ∈ {OB, BB}; matched triplets
resampled together), else the run's own Wilson interval (``trigger/TR_X_ci_low``/``_ci_high``).
"""

from __future__ import annotations

from collections.abc import Sequence

from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.gold import is_gold
from benevaudit.report.intervals import detection_replicates, wanted
from benevaudit.report.runs import Run

KEY = "detection"
TITLE = "Detection (Table 3)"
ORDER = 30
COLUMNS = ("binary/accuracy", "binary/precision", "binary/recall", "binary/f1",
           "trigger/TR_N", "trigger/TR_OB", "trigger/TR_BB", "trigger/delta_OB_BB")
HEADERS = ["Detector", "Accuracy", "Precision", "Recall", "F1", "TR_N", "TR_OB", "TR_BB",
           "Δ OB−BB"]
FIGURES = ("confusion_matrix*.png", "trigger*.png", "flips*.png", "bootstrap*.png")


def claims(run: Run) -> bool:
    """Corpus runs only: a detect run on human-labelled data is External validity's."""
    return run.task == "detect" and not is_gold(run)


def detector_of(run: Run) -> str:
    return run.chosen("detector")


def label_of(run: Run) -> str:
    """The detector's name, with what sets this run apart from the detector's defaults: a
    judge without demographics, the generation mode, one judge of the group."""
    notes = []
    if run.setting("detector.kind") == "judge" and run.setting("detector.demographics") is False:
        notes.append("no demographics")
    if run.setting("detector.mode") == "generate":
        notes.append("generate")
    judge = run.setting("detector.judge")
    if judge:
        notes.append(str(judge))
    return detector_of(run) + (f" ({', '.join(notes)})" if notes else "")


def scores_detection(run: Run) -> bool:
    """False for a flips run (``flips.with``/``flips.without``): it compares two runs and has
    no rates of its own; its figure is still shown."""
    return any(k.startswith(("binary/", "trigger/")) for k in run.metrics)


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    scored = [r for r in runs if scores_detection(r)]
    groups = by_condition(scored, lambda r: (label_of(r), r.condition))
    rows = []
    for (detector, _), members in groups.items():
        reps = [context.replicates(r, "predictions.parquet", "detection",
                                   lambda f, n, s: detection_replicates(f, n, s), wanted)
                for r in members]
        rows.append([detector] + [context.cell(members, m, reps) for m in COLUMNS])
    table = Table("Table 3: binary detection (B = OB ∪ BB positive) and trigger rates", HEADERS,
                  rows, note="Cells: mean ± std over seeds (n), [95% interval: bootstrap over "
                  "the run's dialogues, or the run's Wilson interval]. Invalid verdicts are left "
                  "out of every rate.")
    figures = figures_of(runs, FIGURES, lambda r: f"detector {detector_of(r)}")
    return SectionOutput(KEY, TITLE, tables=[table], figures=figures)
