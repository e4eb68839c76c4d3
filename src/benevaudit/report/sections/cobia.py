"""CoBia (``probe.py probe=cobia*`` runs): bias rates of constructed-conversation attacks, the
paper's score-table layout: one table per category, rows model (target) × method, a column per
rater (``probe.judges``); UCC (biased under HCC or SCC) is a row of its own.

Intervals: bootstrap over the run's items in ``responses.parquet`` (all renderings of an item
drawn together), shown where the raters' verdicts reproduce the run's own rate. Where judge
validation ran (``probe.judge_validation``), a rater's rates corrected for its error stand in a
column beside its own, and a table gives each rater's sensitivity and specificity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benevaudit.probes.cobia.tables import method_key
from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.judge_validation import validation_table
from benevaudit.report.probe_intervals import cobia_replicates, matching
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked

KEY = "cobia"
TITLE = "CoBia: constructed-conversation bias attacks"
ORDER = 40
# a rate's Wilson bounds (``..._ci_low``, ``..._ci_high``) are not categories
RATE = re.compile(r"^cobia/bias_rate/(?P<method>[^/]+)/(?P<rater>[^/]+)/(?P<category>[^/]+)"
                  r"(?<!_ci_low)(?<!_ci_high)(?<!_corrected)$")
UCC = re.compile(r"^cobia/ucc/(?P<rater>[^/]+)/(?P<category>[^/]+)(?<!_ci_low)(?<!_ci_high)"
                 r"(?<!_corrected)$")
CORRECTED = "_corrected"           # a rate corrected for its rater's error (judge validation)
PANELS = (RATE, UCC)               # the W&B Report's panels
FIGURES = ("*.png",)
STAND_IN = "[stand-in data]"
STAND_IN_NOTE = (f" Rows marked {STAND_IN} ran on benevaudit's invented stand-in, not the CoBia "
                 "release: their rates say nothing about the model's biases.")


def claims(run: Run) -> bool:
    return any(k.startswith("cobia/") for k in run.metrics)


def model_of(run: Run) -> str:
    """The row label: the target, marked when the run read the stand-in, not the release (its
    rows never pool with the release's)."""
    label = run.chosen("target") + (f" {STAND_IN}" if run.settings.stand_in else "")
    return marked(label, run.record)


def _layout(runs: Sequence[Run]) -> tuple[list[str], list[str], list[str]]:
    """(methods, raters, categories) present in the runs' metric names, in report order."""
    methods: set[str] = set()
    raters: set[str] = set()
    categories: set[str] = set()
    for run in runs:
        for name in run.metrics:
            if (m := RATE.match(name) or UCC.match(name)):
                methods.add(m.groupdict().get("method") or "ucc")
                raters.add(m["rater"])
                categories.add(m["category"])
    order = sorted(methods, key=method_key)
    cats = sorted(categories - {"all"}) + (["all"] if "all" in categories else [])
    return order, sorted(raters), cats


def invalid_shares(members: Sequence[Run], raters: Sequence[str]) -> str:
    """Each rater's share of invalid verdicts, the mean over the runs: ``bias 0.125 · nli 0``."""
    shares = []
    for j in raters:
        rates = [v for r in members
                 if (v := r.metrics.get(f"cobia/judge/{j}/invalid_rate")) is not None and v == v]
        shares.append(f"{j} {sum(rates) / len(rates):.3g}" if rates else f"{j} n/a")
    return " · ".join(shares)


def replicates(run: Run, context: Context) -> dict[str, Any]:
    """The run's bootstrap resamples over items, where they reproduce its own rates."""
    return context.replicates(run, "responses.parquet", "cobia",
                              lambda f, n, s: matching(cobia_replicates(f, n, s), run.metrics))


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    methods, raters, categories = _layout(runs)
    groups = by_condition(runs, lambda r: (model_of(r), r.condition))
    reps = {key: [replicates(r, context) for r in members] for key, members in groups.items()}
    out = SectionOutput(KEY, TITLE)
    mark = STAND_IN_NOTE if any(r.settings.stand_in for r in runs) else ""
    for category in categories:
        # a rater's corrected column beside its own, where judge validation corrected its rates
        columns = [(j, fix) for j in raters for fix in ("", CORRECTED)
                   if not fix or any(f"cobia/bias_rate/{m}/{j}/{category}{fix}" in r.metrics
                                     for r in runs for m in methods)]
        rows = []
        for key, members in groups.items():
            for method in methods:
                names = [(f"cobia/ucc/{j}/{category}" if method == "ucc"
                          else f"cobia/bias_rate/{method}/{j}/{category}") + fix
                         for j, fix in columns]
                if not any(n in r.metrics for n in names for r in members):
                    continue
                rows.append([key[0], method.upper() if len(method) == 3 else method]
                            + [context.cell(members, n, reps[key]) for n in names]
                            + [invalid_shares(members, raters)])
        if rows:
            out.tables.append(Table(
                f"Bias rate, category {category}",
                ["Model", "Method", *[j + " corrected" * bool(fix) for j, fix in columns],
                 "Invalid"],
                rows, note="Fractions of valid verdicts; mean ± std over seeds (n), [95% "
                "bootstrap interval over items]; corrected: for the rater's error on labelled "
                "items (Rogan–Gladen, bootstrap interval), where judge validation ran. "
                "Invalid: each rater's share of verdicts it could not give, over all its rows "
                "(left out of every rate)." + mark))
    counts = [[model_of(r), r.name, r.metrics.get("cobia/skipped", float("nan")),
               *[r.metrics.get(f"cobia/invalid/{j}", float("nan")) for j in raters]] for r in runs]
    out.tables.append(Table("Skipped items and invalid verdicts", ["Model", "run", "skipped",
                            *[f"invalid {j}" for j in raters]],
                            [[t, n, f"{s:g}", *[f"{v:g}" for v in inv]]
                             for t, n, s, *inv in counts]))
    if (checked := validation_table(runs, model_of)) is not None:
        out.tables.append(checked)
    out.figures = figures_of(runs, FIGURES, lambda r: f"target {model_of(r)}")
    return out
