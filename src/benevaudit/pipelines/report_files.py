"""The report's files in its folder: ``runs.parquet``/``runs.csv``, ``report.html`` and
``report.md`` (:func:`write_report`), and a paired comparison's ``paired.csv`` and
``paired_flips.csv`` (:func:`write_paired`). :func:`build_report` is the one call from run
directories to every file, for ``report.py``, the end-of-sweep callback and notebooks. Every
file is written whole (:func:`benevaudit.files.write_atomically`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from benevaudit.files import write_atomically, write_text_atomically
from benevaudit.report.build import Report, make_report
from benevaudit.report.document import SectionOutput
from benevaudit.report.paired import Comparison
from benevaudit.report.paired_section import FLIPS, TABLE, paired_texts
from benevaudit.report.runs import Run


class ReportFiles(NamedTuple):
    """Where the report went, and what it holds."""

    runs_parquet: Path
    runs_csv: Path
    html: Path
    markdown: Path
    runs: list[Run]
    sections: list[SectionOutput]
    gate: tuple[str, ...] = ()    # report.py gate=true: one line per significant paired change


class PairedFiles(NamedTuple):
    table: Path
    flips: Path


def write_report(report: Report, out: Path) -> ReportFiles:
    """``report`` as runs.parquet/csv, report.html and report.md in ``out`` (made if absent)."""
    out.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(out / "runs.parquet", out / "runs.csv", out / "report.html",
                        out / "report.md", report.runs, report.sections)
    write_atomically(files.runs_parquet, lambda tmp: report.table.to_parquet(tmp, index=False))
    write_text_atomically(files.runs_csv, report.table.to_csv(index=False))
    write_text_atomically(files.html, report.html)
    write_text_atomically(files.markdown, report.markdown)
    return files


def build_report(roots: Sequence[Path], out: Path, title: str = "benevaudit report",
                 n_resamples: int = 1000, seed: int = 0,
                 options: dict[str, dict[str, Any]] | None = None,
                 extra: Sequence[SectionOutput] = ()) -> ReportFiles:
    """The report of the runs under ``roots`` (:func:`~benevaudit.report.build.make_report`)
    written into ``out``."""
    return write_report(make_report(roots, out, title, n_resamples, seed, options, extra), out)


def write_paired(comparison: Comparison, out: Path) -> PairedFiles:
    """``paired.csv`` and ``paired_flips.csv`` in the report's run directory."""
    texts = paired_texts(comparison)
    files = PairedFiles(out / TABLE, out / FLIPS)
    write_text_atomically(files.table, texts[TABLE])
    write_text_atomically(files.flips, texts[FLIPS])
    return files
