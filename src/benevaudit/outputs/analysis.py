"""What ``analyze.py`` writes: each step's files and figures (:class:`benevaudit.analysis.tables.
Part`), by file name, into the run directory, each written whole."""

from __future__ import annotations

from pathlib import Path

from benevaudit.analysis.tables import Part
from benevaudit.files import write_text_atomically
from benevaudit.plotting import write_png


def write_part(run_dir: Path, part: Part) -> dict[str, float]:
    """The part's text files, then its figures (each painter given the run's name); its
    metrics back, for ``metrics.json``."""
    for name, text in part.files.items():
        write_text_atomically(run_dir / name, text)
    for name, draw in part.figures.items():
        write_png(run_dir / name, draw(run_dir.resolve().name))
    return part.metrics
