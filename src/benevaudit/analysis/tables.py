"""The CSV tables an analysis run writes: one row a dict, NaN written as an empty cell."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["empty"])
        writer.writeheader()
        writer.writerows({k: ("" if isinstance(v, float) and math.isnan(v) else v)
                          for k, v in r.items()} for r in rows)
    return path
