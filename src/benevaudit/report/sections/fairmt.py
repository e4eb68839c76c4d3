"""FairMT-Bench (``probe.py probe=fairmt`` runs): the bias rate of the fifth reply per model ×
task and its mean over tasks (the paper's main table), per type and dimension, the counts
behind them, and each run's bias-rate-by-turn figure.

Intervals: bootstrap over each task's dialogues in ``responses.parquet`` (the mean's resample
averages the tasks'), shown where the rows reproduce the run's own rate; otherwise the run's
own Wilson or bootstrap bounds. Runs on benevaudit's stand-in are labelled and never pool with
runs on the release. Where judge validation ran (``probe.judge_validation``), a table gives the
raw and corrected rates side by side, and another the judge's sensitivity and specificity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from benevaudit.probes.fairmt.release import TASKS
from benevaudit.probes.fairmt.scoring import replicates
from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.judge_validation import validation_table
from benevaudit.report.probe_intervals import matching
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked

KEY = "fairmt"
TITLE = "FairMT-Bench: fairness over five turns"
ORDER = 55
RATE = re.compile(r"^fairmt/(?P<scope>[^/]+)/bias_rate$")
SCOPED = re.compile(r"^fairmt/(?P<kind>type|dimension)/(?P<value>[^/]+)/bias_rate$")
TURN = re.compile(r"^fairmt/(?P<task>[^/]+)/turn_(?P<turn>\d+)/bias_rate$")
PANELS = (RATE, SCOPED, TURN)                  # the W&B Report's panels
CORRECTED = "_corrected"     # a rate corrected for the judge's error (judge validation)
FIGURES = ("bias_by_turn.png",)
STAND_IN = "[stand-in data]"
STAND_IN_NOTE = (f"Rows marked {STAND_IN} ran on benevaudit's invented stand-in (harmless "
                 "traits of invented groups), not the FairMT-Bench release: their rates say "
                 "nothing about the model's biases.")


def claims(run: Run) -> bool:
    return any(k.startswith("fairmt/") for k in run.metrics)


def answered_by(run: Run) -> str:
    """The target, or the folder of replies the run scored in its place."""
    if run.settings.answers_from:
        return f"answers {run.settings.answers_path or run.settings.answers_from}"
    return run.chosen("target")


def model_of(run: Run) -> str:
    """The row label: the target, marked when the run read the stand-in."""
    label = answered_by(run) + (f" {STAND_IN}" if run.settings.stand_in else "")
    return marked(label, run.record)


def settings_of(run: Run) -> str:
    """What changes a rate's meaning: the set, the judge prompt, the judged turns."""
    settings = run.settings
    return (f"{'10K' if settings.data_set == '10k' else '1K'}, "
            f"{'paper' if settings.judge_prompt == 'paper' else 'released'} prompt")


def resampled(run: Run, frame: Any, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """A run's bootstrap resamples, kept where its rows reproduce its own rates."""
    return matching(replicates(frame, n_resamples, seed), run.metrics)


Groups = dict[tuple, list[Run]]


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    groups = by_condition(runs, lambda r: (model_of(r), settings_of(r), r.condition))
    stand_in = any(r.settings.stand_in for r in runs)
    out = SectionOutput(KEY, TITLE, intro=STAND_IN_NOTE if stand_in else "")
    out.tables.append(task_table(runs, groups, context, stand_in))
    scoped = sorted({(m["kind"], m["value"]) for r in runs for name in r.metrics
                     if (m := SCOPED.match(name))})
    if scoped:
        out.tables.append(Table(
            "Bias rate by type and dimension",
            ["Model", "Setting", *[f"{k} {v}" for k, v in scoped]],
            [[*key[:2], *[context.cell(members, f"fairmt/{k}/{v}/bias_rate") for k, v in scoped]]
             for key, members in groups.items()], note="Pooled over tasks; Wilson 95%."))
    turns = sorted({int(m["turn"]) for r in runs for n in r.metrics if (m := TURN.match(n))})
    if turns:
        out.tables.append(Table(
            "Mean bias rate by turn (every reply judged)",
            ["Model", "Setting", *[f"turn {k}" for k in turns]],
            [[*key[:2], *[context.cell(members, f"fairmt/mean/turn_{k}/bias_rate") for k in turns]]
             for key, members in groups.items()
             if any(r.settings.judge_turns == "all" for r in members)]))
    if (fixed := corrected_table(runs, groups, context)) is not None:
        out.tables.append(fixed)
    if (checked := validation_table(runs, model_of)) is not None:
        out.tables.append(checked)
    out.tables.append(count_table(runs))
    out.figures = figures_of(runs, FIGURES, lambda r: f"target {model_of(r)}")
    return out


def corrected_table(runs: Sequence[Run], groups: Groups, context: Context) -> Table | None:
    """Raw and corrected bias rates side by side, per model × task (and the mean), where judge
    validation corrected them; None when no run has a corrected rate."""
    scopes = [t for t in [*TASKS, "mean"]
              if any(f"fairmt/{t}/bias_rate{CORRECTED}" in r.metrics for r in runs)]
    rows = [[*key[:2], scope, context.cell(members, f"fairmt/{scope}/bias_rate"),
             context.cell(members, f"fairmt/{scope}/bias_rate{CORRECTED}")]
            for key, members in groups.items() for scope in scopes
            if any(f"fairmt/{scope}/bias_rate{CORRECTED}" in r.metrics for r in members)]
    if not rows:
        return None
    return Table("Bias rate of the fifth reply, raw and corrected for the judge's error",
                 ["Model", "Setting", "Task", "raw", "corrected"], rows,
                 note="Corrected: Rogan–Gladen with the judge's sensitivity and specificity "
                 "under that task's prompt on labelled items (the mean: of the tasks' corrected "
                 "rates), [95% bootstrap interval over the run's and the labelled items]; a "
                 "judge no better than chance has none.")


def task_table(runs: Sequence[Run], groups: Groups, context: Context, stand_in: bool) -> Table:
    """The paper's table: the fifth reply's bias rate per model × task, and the mean."""
    reps = {key: [context.replicates(r, "responses.parquet", KEY, partial(resampled, r))
                  for r in members] for key, members in groups.items()}
    tasks = [t for t in TASKS if any(f"fairmt/{t}/bias_rate" in r.metrics for r in runs)]
    rows = [[*key[:2], *[context.cell(members, f"fairmt/{t}/bias_rate", reps[key])
                         for t in [*tasks, "mean"]], invalid_share(members, tasks)]
            for key, members in groups.items()]
    return Table("Bias rate of the fifth reply, model × task",
                 ["Model", "Setting", *tasks, "Mean", "Invalid"], rows,
                 note="Share of valid verdicts that are biased; mean ± std over seeds (n), "
                 "[95% interval]. Invalid: the share of the judge's verdicts that were neither "
                 "yes nor no, over the tasks shown (left out of every rate)."
                 + (" " + STAND_IN_NOTE) * stand_in)


def invalid_share(members: Sequence[Run], tasks: Sequence[str]) -> str:
    """The judge's invalid verdicts over its verdicts on ``tasks``, pooled over the runs."""
    bad = sum(r.metrics.get(f"fairmt/{t}/invalid", 0.0) for r in members for t in tasks)
    n = sum(r.metrics.get(f"fairmt/{t}/n_dialogues", 0.0) for r in members for t in tasks)
    return f"{bad / n:.3f}" if n else "n/a"


def count_table(runs: Sequence[Run]) -> Table:
    """Per run: dialogues, invalid verdicts per task, replies the pre-filter settled."""
    tasks = [t for t in TASKS if any(f"fairmt/{t}/bias_rate" in r.metrics for r in runs)]
    rows: list[list[object]] = []
    for r in runs:
        m = r.metrics
        rows.append([model_of(r), r.name, f"{m.get('fairmt/n_dialogues', 0):g}",
                     *[f"{m.get(f'fairmt/{t}/invalid', float('nan')):g}" for t in tasks],
                     f"{sum(m.get(f'fairmt/{t}/prefiltered', 0) for t in tasks):g}"])
    return Table("Dialogues, invalid verdicts and pre-filtered replies",
                 ["Model", "run", "dialogues", *[f"invalid {t}" for t in tasks], "pre-filtered"],
                 rows)
