"""What each step of the analysis gives back (:class:`Part`): its metrics, its files as text
(CSV tables: one row a dict, NaN an empty cell) and its figures as painters;
``benevaudit.outputs.analysis`` writes them into the run directory."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Part:
    """One step's results, by the file each becomes in the run directory."""

    metrics: dict[str, float] = field(default_factory=dict)     # into metrics.json
    files: dict[str, str] = field(default_factory=dict)          # file name -> text
    # file name -> the painter that draws it, given the run's name (its titles name the run):
    # the PNG's bytes
    figures: dict[str, Callable[[str], bytes]] = field(default_factory=dict)


def csv_text(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """The rows as CSV text (the csv module's dialect: ``\\r\\n`` line ends), the header
    ``columns`` or the first row's keys (``empty`` without rows)."""
    buf = io.StringIO(newline="")
    names = list(columns) if columns is not None else (list(rows[0]) if rows else ["empty"])
    writer = csv.DictWriter(buf, fieldnames=names)
    writer.writeheader()
    writer.writerows({k: ("" if isinstance(v, float) and math.isnan(v) else v)
                      for k, v in r.items()} for r in rows)
    return buf.getvalue()
