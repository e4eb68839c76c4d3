"""One call from run directories to every report file; used by ``report.py`` and by the
end-of-sweep callback, and callable from notebooks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from benevaudit.report.context import Context
from benevaudit.report.document import SectionOutput
from benevaudit.report.html import html_page, markdown, runs_frame, write_runs
from benevaudit.report.runs import Run, collect, find_runs
from benevaudit.report.sections import render_sections


class ReportFiles(NamedTuple):
    """Where the report went, and what it holds."""

    runs_parquet: Path
    runs_csv: Path
    html: Path
    markdown: Path
    runs: list[Run]
    sections: list[SectionOutput]
    gate: tuple[str, ...] = ()    # report.py gate=true: one line per significant paired change


def build_report(roots: Sequence[Path], out: Path, title: str = "benevaudit report",
                 n_resamples: int = 1000, seed: int = 0,
                 options: dict[str, dict[str, Any]] | None = None,
                 extra: Sequence[SectionOutput] = ()) -> ReportFiles:
    """Collect the runs under ``roots`` and write runs.parquet/csv, report.html and report.md
    into ``out``. A root with no runs is an error that names it; failed runs are listed.
    ``options`` are per-section settings by section key (``{"fairdialogue": {...}}``);
    ``extra`` sections built from more than one run's rows (the paired comparison) come last."""
    out.mkdir(parents=True, exist_ok=True)
    runs = collect(roots, exclude=out)
    if not runs:
        raise FileNotFoundError(f"no run directories (a metrics.json or a .hydra/ folder) under "
                                f"{', '.join(str(r) for r in roots)}")
    context = Context(n_resamples=n_resamples, seed=seed, options=options)
    for root in roots:                     # one listed root that holds nothing is said, not lost
        if not find_runs(root):
            context.notes.append(f"no run directories under {root}")
    sections = [*render_sections(runs, context), *extra]
    parquet, csv = write_runs(runs_frame(runs), out)
    html_path, md_path = out / "report.html", out / "report.md"
    html_path.write_text(html_page(title, sections, runs, context.notes), encoding="utf-8")
    md_path.write_text(markdown(title, sections, runs, context.notes, out), encoding="utf-8")
    return ReportFiles(parquet, csv, html_path, md_path, runs, sections)
