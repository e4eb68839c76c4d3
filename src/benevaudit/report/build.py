"""One call from run directories to the whole report as values: the runs, their sections, the
runs table and the text of ``report.html`` and ``report.md``. ``benevaudit.pipelines.
report_files`` writes them (``report.py``, the end-of-sweep callback, and notebooks through its
``build_report``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from benevaudit.report.context import Context
from benevaudit.report.document import SectionOutput
from benevaudit.report.html import html_page, markdown, runs_frame
from benevaudit.report.runs import Run, collect, find_runs
from benevaudit.report.sections import render_sections


class Report(NamedTuple):
    """A report of runs, ready to be written."""

    runs: list[Run]
    sections: list[SectionOutput]
    table: pd.DataFrame        # runs.parquet and runs.csv: one row per run
    html: str                  # report.html, figures inlined
    markdown: str              # report.md, figures linked from the report's folder


def make_report(roots: Sequence[Path], home: Path, title: str = "benevaudit report",
                n_resamples: int = 1000, seed: int = 0,
                options: dict[str, dict[str, Any]] | None = None,
                extra: Sequence[SectionOutput] = ()) -> Report:
    """Collect the runs under ``roots`` into a :class:`Report`. ``home`` is the folder the
    report is for (nothing is written): it is no run of the report, and ``report.md`` links
    figures from it. A root with no runs is an error that names it; failed runs are listed.
    ``options`` are per-section settings by section key (``{"fairdialogue": {...}}``);
    ``extra`` sections built from more than one run's rows (the paired comparison) come last."""
    runs = collect(roots, exclude=home)
    if not runs:
        raise FileNotFoundError(f"no run directories (a metrics.json or a .hydra/ folder) under "
                                f"{', '.join(str(r) for r in roots)}")
    context = Context(n_resamples=n_resamples, seed=seed, options=options)
    for root in roots:                     # one listed root that holds nothing is said, not lost
        if not find_runs(root):
            context.notes.append(f"no run directories under {root}")
    sections = [*render_sections(runs, context), *extra]
    return Report(runs, sections, runs_frame(runs),
                  html_page(title, sections, runs, context.notes),
                  markdown(title, sections, runs, context.notes, home))
