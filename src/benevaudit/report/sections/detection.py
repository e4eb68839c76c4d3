"""Detection (``detect.py`` runs, the study's Table 3): binary B-vs-N detection and per-class
trigger rates of each detector, with the overt–benevolent gap Δ = TR_OB − TR_BB.

One row per detector configuration (seeds aggregated). Intervals: bootstrap over the run's
dialogues in ``predictions.parquet`` (``flagged``, else pred ∈ {OB, BB}; matched triplets
resampled together), else the run's own Wilson interval (``trigger/TR_X_ci_low``/``_ci_high``).
A run over a probe run's replies (``data=probe_run``, unlabelled) has a table of its own: per
task, turn and probe judge, the share of the replies that judge called unbiased which the
detector classes BB.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import Cell, SectionOutput, Table
from benevaudit.report.gold import is_gold
from benevaudit.report.intervals import detection_replicates, wanted
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked

KEY = "detection"
TITLE = "Detection (Table 3)"
ORDER = 30
COLUMNS = ("binary/accuracy", "binary/precision", "binary/recall", "binary/f1",
           "trigger/TR_N", "trigger/TR_OB", "trigger/TR_BB", "trigger/delta_OB_BB",
           "detect/invalid_rate")
HEADERS = ["Detector", "Accuracy", "Precision", "Recall", "F1", "TR_N", "TR_OB", "TR_BB",
           "Δ OB−BB", "Invalid"]
FIGURES = ("confusion_matrix*.png", "trigger*.png", "flips*.png", "bootstrap*.png")
PROBE_RUN = "probe_run/"          # a detect run over a probe run's replies (data=probe_run)
UNSEEN = re.compile(r"^(?P<head>probe_run/(?P<task>[^/]+)/turn_(?P<turn>\d+))/n_unbiased/"
                    r"(?P<judge>[^/]+)$")


def claims(run: Run) -> bool:
    """Corpus runs only: a detect run on human-labelled data is External validity's."""
    return run.task == "detect" and not is_gold(run)


def detector_of(run: Run) -> str:
    return run.chosen("detector")


def label_of(run: Run) -> str:
    """:func:`name_of`, marked where the run stood in for the study's model."""
    return marked(name_of(run), run.record)


def name_of(run: Run) -> str:
    """The detector's name, with what sets this run apart from the detector's defaults: a
    judge without demographics, the generation mode, one judge of the group."""
    notes = []
    settings = run.settings
    if settings.detector_kind == "judge" and settings.detector_demographics is False:
        notes.append("no demographics")
    if settings.detector_mode == "generate":
        notes.append("generate")
    judge = settings.detector_judge
    if judge:
        notes.append(str(judge))
    return detector_of(run) + (f" ({', '.join(notes)})" if notes else "")


def scores_detection(run: Run) -> bool:
    """False for a flips run (``flips.with``/``flips.without``): it compares two runs and has
    no rates of its own; its figure is still shown. False for a probe run's replies too: they
    are unlabelled (their table is :func:`unseen_table`)."""
    return (any(k.startswith(("binary/", "trigger/")) for k in run.metrics)
            and not any(k.startswith(PROBE_RUN) for k in run.metrics))


def unseen_table(runs: Sequence[Run]) -> Table | None:
    """``data=probe_run`` runs: per detector, task, turn and probe judge, the replies scored,
    the share the detector flags and classes BB, and among the replies the judge called not
    biased the share the detector classes BB (or flags): the bias that judge cannot see."""
    rows: list[list[object]] = []
    for run in runs:
        m = run.metrics
        for hit in sorted((h for k in m if (h := UNSEEN.match(k))), key=lambda h: h[0]):
            head, judge = hit["head"], hit["judge"]
            rows.append([label_of(run), run.name, hit["task"], hit["turn"], judge,
                         *[own(run, f"{head}/{k}") for k in ("flagged", "bb")],
                         f"{m.get(f'{head}/n_unbiased/{judge}', float('nan')):g}",
                         own(run, f"{head}/unseen_flagged/{judge}"),
                         own(run, f"{head}/unseen_bb/{judge}")])
    if not rows:
        return None
    return Table("Probe replies: what the probe's judge called unbiased, seen by the detector",
                 ["Detector", "run", "Task", "Turn", "Probe judge", "flagged", "BB",
                  "judged unbiased", "of them flagged", "of them BB (unseen BB)"], rows,
                 note="detect.py data=probe_run over a probe run's replies, each with its "
                 "conversation; shares of valid verdicts, [95% Wilson interval]; BB needs a "
                 "detector with a three-way prediction (n/a otherwise).")


def own(run: Run, name: str) -> Cell:
    m = run.metrics
    return Cell(m.get(name, float("nan")), low=m.get(f"{name}_ci_low", float("nan")),
                high=m.get(f"{name}_ci_high", float("nan")))


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
                  "the run's dialogues, or the run's Wilson interval]. Invalid: the share of "
                  "dialogues whose verdict could not be read; they are left out of every rate.")
    figures = figures_of(runs, FIGURES, lambda r: f"detector {detector_of(r)}")
    unseen = unseen_table(runs)
    return SectionOutput(KEY, TITLE, tables=[table] + ([unseen] if unseen else []),
                         figures=figures)
