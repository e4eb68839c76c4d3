"""CoBia's blind annotation sheets written into a folder (``probe.annotation.size``).

A CoBia run carries its sheets in its result's tables (``annotation/<file>``); this writes the
same files into any folder, for a sheet drawn outside a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benevaudit.outputs.stand_in_files import write_files
from benevaudit.probes.cobia.human import annotation_sheets


def write_sheets(rows: list[dict[str, Any]], folder: Path, size: int, seed: int,
                 groups: list[str], grouping: str) -> dict[str, int]:
    """The sheets of :func:`annotation_sheets` written into ``folder``; each group's size."""
    made = annotation_sheets(rows, size, seed, groups, grouping)
    write_files(folder, made.files())
    return made.sizes
