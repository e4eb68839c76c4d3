"""FairDialogue (``probe.py probe=fairdialogue_*`` runs), in the paper's layouts:
Table 2, GUS (decision tasks) and SNSR/SNSV (recommendation tasks) per model × attribute, with
the average over tasks; Table 3, RST and ANR per group under negative feedback. A model run in
audio mode is marked ``(heard)``; one run in both modes gets the "heard vs stated" table
(:mod:`benevaudit.report.fairdialogue_heard`), and spoken replies transcribed by Whisper beside
the API's own transcripts get their word error rate per group
(:mod:`benevaudit.report.fairdialogue_asr`). Audio runs add the intelligibility audit
(:mod:`benevaudit.report.fairdialogue_stimuli`): each group's stimuli (Whisper's WER against
the text, speaking rate, pitch), and GUS and SNSR within strata of stimulus WER.

``report.fairdialogue.definition`` picks Table 2's scoring: ``paper`` (eq. 1–4, the default) or
``released`` (the authors' released scoring, its SNSR/SNSV under
``report.fairdialogue.similarity``, PRAG by default). Every run writes both.

Intervals: bootstrap over the run's items in ``responses.parquet`` (an item's renderings under
every group drawn together), shown where they reproduce the run's own value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np

from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import Cell, SectionOutput, Table
from benevaudit.report.probe_intervals import (feedback_replicates, gus_replicates, matching,
                                               prag_replicates)
from benevaudit.report.fairdialogue_asr import WER, wer_table
from benevaudit.report.fairdialogue_heard import comparison, mode_of
from benevaudit.report.fairdialogue_intervals import released_replicates
from benevaudit.report.fairdialogue_stimuli import STIMULUS, STRATUM, stimuli_table, strata_table
from benevaudit.report.runs import Run
from benevaudit.specs import Spec

KEY = "fairdialogue"
TITLE = "FairDialogue: decision and recommendation fairness"
ORDER = 50
SCORE = re.compile(r"^fairness/(?P<task>[^/]+)/(?P<attribute>[^/]+)/(?P<measure>gus|snsr|snsv)$")
FEEDBACK = re.compile(r"^fairness/feedback/(?P<attribute>[^/]+)/(?P<group>[^/]+)/(?P<m>rst|anr)$")
RELEASED = re.compile(r"^fairness/(?P<task>[^/]+)/(?P<attribute>[^/]+)/released/"
                      r"(?:(?P<gus>gus)|(?P<similarity>prag|serp)/(?P<sns>snsr|snsv))$")
PANELS = (SCORE, FEEDBACK, RELEASED, WER, STRATUM, STIMULUS)    # the W&B Report's panels
FIGURES = ("*.png",)
Definition = Literal["paper", "released"]
Similarity = Literal["prag", "serp"]
DEFINITIONS, SIMILARITIES = get_args(Definition), get_args(Similarity)


def claims(run: Run) -> bool:
    return any(k.startswith("fairness/") for k in run.metrics)


def model_label(run: Run) -> str:
    """The model, marked ``(heard)`` where the group was only heard (audio mode)."""
    target = run.chosen("target")
    return f"{target} (heard)" if mode_of(run) == "audio" else target


class Scoring(Spec):
    """``report.fairdialogue`` (conf/report.yaml): Table 2's scoring."""

    definition: Definition
    similarity: Similarity


# a report built from Python without the block (``build_report(options=None)``): eq. 1-4
PAPER = Scoring(definition="paper", similarity="prag")


def settings(context: Context) -> tuple[str, str]:
    """(definition, similarity) from ``report.fairdialogue``, checked."""
    block = context.options.get(KEY)
    scoring = PAPER if block is None else Scoring.of(block, f"report.{KEY}")
    return scoring.definition, scoring.similarity


def score_of(name: str, definition: str, similarity: str) -> tuple[str, str, str] | None:
    """(task, attribute, measure) of a Table 2 metric under the chosen scoring, else None."""
    if definition == "paper":
        m = SCORE.match(name)
        return (m["task"], m["attribute"], m["measure"]) if m and m["task"] != "feedback" else None
    m = RELEASED.match(name)
    if not m or (m["similarity"] and m["similarity"] != similarity):
        return None
    return m["task"], m["attribute"], m["gus"] or m["sns"]


def metric_name(task: str, attribute: str, measure: str, definition: str, similarity: str) -> str:
    base = f"fairness/{task}/{attribute}"
    if definition == "paper":
        return f"{base}/{measure}"
    return f"{base}/released/gus" if measure == "gus" else f"{base}/released/{similarity}/{measure}"


def _replicates(run: Run, context: Context) -> dict[str, Any]:
    ranks = run.settings.probe_kind == "recommendation"     # its rows hold ranked lists
    k, normalise = run.settings.k, run.settings.prag_normalise

    def make(frame: Any, n: int, s: int) -> dict[str, Any]:
        both = {**gus_replicates(frame, n, s), **released_replicates(frame, n, s)}
        if ranks:
            both.update(prag_replicates(frame, k, normalise, n, s))
        return matching(both, run.metrics)
    return context.replicates(run, "responses.parquet", "fairdialogue", make)


def model_condition(run: Run) -> tuple[str, str]:
    """(target, condition with the probe choice left out): the decision and recommendation
    runs of one model share a Table 2 row."""
    return model_label(run), " ".join(p for p in run.condition.split()
                                      if not p.startswith("probe="))


def cell_of(members: Sequence[Run], reps: Sequence[dict], name: str, context: Context) -> Cell:
    """The cell of ``name`` over the runs that wrote it (a model's decision runs for GUS, its
    recommendation runs for SNSR/SNSV)."""
    have = [i for i, r in enumerate(members) if name in r.metrics]
    if not have:
        return Cell(float("nan"))
    return context.cell([members[i] for i in have], name, [reps[i] for i in have])


def task_mean(values: Sequence[float]) -> float:
    """The average over tasks of the finite values; NaN where no task has one (every answer
    of a model unparseable)."""
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def table2(runs: Sequence[Run], context: Context) -> Table | None:
    definition, similarity = settings(context)
    cols: dict[tuple[str, str], None] = {}
    attributes: dict[str, None] = {}
    for run in runs:
        for name in run.metrics:
            if score := score_of(name, definition, similarity):
                cols[(score[0], score[2])] = None
                attributes[score[1]] = None
    if not cols:
        return None
    columns = sorted(cols, key=lambda c: (c[1] != "gus", c[0], c[1]))
    measures = sorted({m for _, m in columns}, key=("gus", "snsr", "snsv").index)
    rows = []
    for (target, _), members in by_condition(runs, model_condition).items():
        reps = [_replicates(r, context) for r in members]
        for attribute in attributes:
            names = [metric_name(t, attribute, m, definition, similarity) for t, m in columns]
            if not any(n in r.metrics for n in names for r in members):
                continue
            cells = [cell_of(members, reps, n, context) for n in names]
            avgs = [Cell(task_mean([c.mean for (t, m), c in zip(columns, cells)
                                    if m == measure])) for measure in measures]
            rows.append([target, attribute, *cells, *avgs, unparsed_share(members)])
    headers = ["Model", "Attribute", *[f"{t} {m.upper()}" for t, m in columns],
               *[f"avg {m.upper()}" for m in measures], "Unparsed"]
    if definition == "paper":
        title = "Table 2: GUS (decisions), SNSR and SNSV (recommendations), eq. 1-4"
        scale = ("PRAG*'s normaliser decides the SNSR/SNSV scale (see the probe's "
                 "prag.normalise): magnitudes are not comparable with the paper's Table 2; "
                 "report.fairdialogue.definition=released shows the authors' released scoring.")
    else:
        title = (f"Table 2: GUS (decisions), SNSR and SNSV (recommendations), the released "
                 f"scoring ({similarity.upper()} similarity)")
        scale = ("GUS is the mean |Δ| over (item, group pair); SNSR is 1 − the mean pairwise "
                 "similarity and SNSV its variance, as in the authors' released evaluate.py.")
    return Table(title, headers, rows,
                 note="Mean ± std over seeds (n), [95% bootstrap interval over items]; averages "
                 f"over tasks. {scale} Unparsed: the share of the model's answers refused or "
                 "read as no decision or list, over every task (left out of every score).")


def unparsed_share(members: Sequence[Run]) -> str:
    """The runs' refused and unparseable answers over all their answers (``parse/<task>/*``)."""
    counts = {kind: sum(v for r in members for k, v in r.metrics.items()
                        if k.startswith("parse/") and k.endswith(f"/{kind}") and v == v)
              for kind in ("n", "invalid", "refused")}
    return (f"{(counts['invalid'] + counts['refused']) / counts['n']:.3f}" if counts["n"]
            else "n/a")


def _feedback_replicates(run: Run, context: Context) -> dict[str, Any]:
    return context.replicates(run, "responses.parquet", "fairdialogue_feedback",
                              lambda f, n, s: matching(feedback_replicates(f, n, s), run.metrics))


def table3(runs: Sequence[Run], context: Context) -> Table | None:
    keys: dict[tuple[str, str], None] = {}
    for run in runs:
        for name in run.metrics:
            if (m := FEEDBACK.match(name)):
                keys[(m["attribute"], m["group"])] = None
    if not keys:
        return None
    rows = []
    for (target, _), members in by_condition(runs, lambda r: (model_label(r), r.condition)).items():
        reps = [_feedback_replicates(r, context) for r in members]
        for attribute, group in keys:
            base = f"fairness/feedback/{attribute}/{group}"
            if any(f"{base}/rst" in r.metrics for r in members):
                rows.append([target, attribute, group, context.cell(members, f"{base}/rst", reps),
                             context.cell(members, f"{base}/anr", reps)])
    return Table("Table 3: negative feedback, RST (share revised to yes) and ANR (rounds)",
                 ["Model", "Attribute", "Group", "RST", "ANR"], rows,
                 note="Mean ± std over seeds (n), [95% bootstrap interval over the items in "
                 "the protocol].")


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    out = SectionOutput(KEY, TITLE)
    for table in (table2(runs, context), table3(runs, context),
                  comparison(runs, context, _replicates),
                  wer_table(runs, context, model_label), stimuli_table(runs, context),
                  strata_table(runs, context, model_label)):
        if table is not None:
            out.tables.append(table)
    out.figures = figures_of(runs, FIGURES, lambda r: f"target {r.chosen('target')}")
    return out
