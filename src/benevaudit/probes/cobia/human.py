"""People's bias labels for rated rows (``probe.human_labels=<csv>``), and the blind sheets
they fill (``probe.annotation.size``).

The labels CSV has columns ``id`` and ``method`` (as in ``responses.parquet``) and one column
per annotator holding ``biased`` / ``not_biased`` (also ``1``/``0``, ``yes``/``no``, ``true``/
``false``). An empty cell is an output that annotator did not label: the paper's two prompt
groups were labelled by different people, so each row keeps the annotators who labelled it.
A filled sheet (column ``sheet_item`` in place of ``id`` and ``method``) is read through the
``key.csv`` written beside it.

The sheets follow the paper's human validation: per prompt group (a method: its template is
the prompt the outputs answer), a seeded sample of ``size`` outputs (300 in the paper), in a
seeded order, showing only the biased opinion and the output: blind to the method and to every
judge's verdict. The key that maps each sheet row back to its (id, method) is a separate file.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import csv_text, describe_columns, read_csv
from benevaudit.probes.cobia.release_raters import opinion

YES = {"biased", "1", "yes", "true", "bias"}
NO = {"not_biased", "not biased", "unbiased", "0", "no", "false"}
Key = tuple[str, str]                       # (id, method)
SHEET_TEXT = ("opinion", "output")         # a sheet's columns that are no annotator's


def read_annotations(path: str | Path) -> dict[Key, dict[str, str]]:
    """``{(id, method): {annotator: biased | not_biased}}``, empty cells left out."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"probe.human_labels: no file at {str(path)!r}; expected a CSV with "
                          "columns id, method and one column per annotator")
    with csv_text(file, "probe.human_labels", "a CSV with columns id, method, annotators") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or ())
        keyed = "sheet_item" in fields and "id" not in fields
        key = read_key(file.parent / "key.csv") if keyed else {}
        index = ("sheet_item",) if keyed else ("id", "method")
        raters = [c for c in fields if c not in (*index, *SHEET_TEXT)]
        if not set(index) <= set(fields) or not raters:
            raise InputError(f"{file}: expected columns id, method and at least one annotator "
                             f"column (a filled sheet: sheet_item, with key.csv beside it); "
                             f"{describe_columns(fields)}")
        out: dict[Key, dict[str, str]] = {}
        lines: dict[Key, int] = {}               # an output -> the line that labels it
        for line, row in enumerate(reader, start=2):
            labels = row_labels(file, line, row, raters)
            if not labels:
                continue
            at = key_of(file, line, row, key) if keyed else (row["id"], row["method"])
            if at in out:
                raise InputError(f"{file}: lines {lines[at]} and {line} label the same output "
                                 "(id, method); keep one row per output")
            out[at], lines[at] = labels, line
    if not out:
        raise InputError(f"{file}: no row holds a label, nothing to compare; expected "
                         "biased or not_biased in an annotator column")
    return out


def row_labels(file: Path, line: int, row: dict[str, str], raters: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for c in raters:
        v = (row[c] or "").strip().lower()
        if not v:
            continue
        if v not in YES | NO:
            raise InputError(f"{file}:{line}: field {c!r}: expected biased or not_biased "
                             f"(or 1/0, yes/no), got {v!r}")
        labels[c] = "biased" if v in YES else "not_biased"
    return labels


def key_of(file: Path, line: int, row: dict[str, str], key: dict[str, Key]) -> Key:
    if row["sheet_item"] not in key:
        raise InputError(f"{file}:{line}: sheet_item {row['sheet_item']!r} is not in the "
                         f"key.csv beside it; was the sheet written with that key?")
    return key[row["sheet_item"]]


def read_key(path: Path) -> dict[str, Key]:
    if not path.is_file():
        raise InputError(f"{path}: a filled sheet (column sheet_item) is read through the "
                         "key.csv written beside it, which is missing")
    frame = read_csv(path, None, ("sheet_item", "id", "method"), "the key.csv written beside "
                     "the sheets (sheet_item, id, method)", dtype=str, keep_default_na=False)
    items = frame["sheet_item"]
    if items.duplicated().any():
        second = int(items.duplicated().idxmax())        # the first repeat, and its first row
        first = int((items == items[second]).idxmax())
        raise InputError(f"{path}: lines {first + 2} and {second + 2} key the same sheet_item; "
                         "expected the key.csv written with the sheets")
    return {r.sheet_item: (r.id, r.method) for r in frame.itertuples()}


def read_labels(path: str | Path) -> dict[Key, list[str]]:
    """``{(id, method): [label per annotator]}`` for the rows every annotator labelled."""
    return complete_labels(read_annotations(path))


def complete_labels(notes: dict[Key, dict[str, str]]) -> dict[Key, list[str]]:
    """The rows every annotator labelled, each annotator's label in name order."""
    everyone = set().union(*notes.values()) if notes else set()
    return {k: [v[a] for a in sorted(everyone)] for k, v in notes.items()
            if set(v) == everyone}


def write_sheets(rows: list[dict[str, Any]], folder: Path, size: int, seed: int,
                 groups: list[str]) -> dict[str, int]:
    """One blind sheet per prompt group (``sheet_<n>.csv``, groups numbered in ``groups``
    order) and its ``key.csv``; returns each group's sample size."""
    frame = pd.DataFrame(rows)
    folder.mkdir(parents=True, exist_ok=True)
    keys, sizes = [], {}
    for n, group in enumerate(groups, start=1):
        pool = frame[frame["method"] == group].reset_index(drop=True)
        rng = np.random.default_rng([seed, n])
        pick = rng.permutation(len(pool))[:size]      # a seeded sample in a seeded order
        sheet = pd.DataFrame({
            "sheet_item": [f"{n}-{k + 1:03d}" for k in range(len(pick))],
            "opinion": [opinion(pool["group"][i], pool["descriptor"][i]) for i in pick],
            "output": [pool["rated_response"][i] for i in pick], "label": ""})
        sheet.to_csv(folder / f"sheet_{n}.csv", index=False)
        keys.append(pd.DataFrame({"sheet_item": sheet["sheet_item"], "prompt_group": group,
                                  "id": [pool["id"][i] for i in pick],
                                  "method": group}))
        sizes[group] = len(pick)
    pd.concat(keys).to_csv(folder / "key.csv", index=False)
    return sizes
