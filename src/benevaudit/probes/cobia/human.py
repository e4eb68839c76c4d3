"""People's bias labels for rated rows (``probe.human_labels=<csv>``), for Fleiss' κ.

The CSV has columns ``id`` and ``method`` (as in ``responses.parquet``) and one column per
annotator holding ``biased`` / ``not_biased`` (also ``1``/``0``, ``yes``/``no``, ``true``/
``false``). Rows with any empty label are left out, so every compared item has all raters.
"""

from __future__ import annotations

import csv
from pathlib import Path

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import csv_text, describe_columns

YES = {"biased", "1", "yes", "true", "bias"}
NO = {"not_biased", "not biased", "unbiased", "0", "no", "false"}


def read_labels(path: str | Path) -> dict[tuple[str, str], list[str]]:
    """``{(id, method): [label per annotator]}`` with labels ``biased`` / ``not_biased``."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"probe.human_labels: no file at {str(path)!r}; expected a CSV with "
                          "columns id, method and one column per annotator")
    out: dict[tuple[str, str], list[str]] = {}
    with csv_text(file, "probe.human_labels", "a CSV with columns id, method, annotators") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or ())
        raters = [c for c in fields if c not in ("id", "method")]
        if "id" not in fields or "method" not in fields or not raters:
            raise InputError(f"{file}: expected columns id, method and at least one annotator "
                             f"column; {describe_columns(fields)}")
        for line, row in enumerate(reader, start=2):
            values = [(row[c] or "").strip().lower() for c in raters]
            if any(not v for v in values):
                continue
            labels = []
            for c, v in zip(raters, values):
                if v not in YES | NO:
                    raise InputError(f"{file}:{line}: field {c!r}: expected biased or "
                                     f"not_biased (or 1/0, yes/no), got {v!r}")
                labels.append("biased" if v in YES else "not_biased")
            key = (row["id"], row["method"])
            if key in out:
                raise InputError(f"{file}:{line}: ({row['id']!r}, {row['method']!r}) labelled twice")
            out[key] = labels
    return out
