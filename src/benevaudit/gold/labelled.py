"""``data=labelled``: any user's gold set as CSV, JSONL or Parquet.

``data.text_column`` is the item (the agent's turn), ``data.label_column`` its raw label and
``data.label_map`` maps every raw value to N, OB, BB or ``drop``. Optional columns: an id
(else the row number), a context (a user turn before the text), a stratum and a split. Every
check runs before any model loads, and each failure is one line naming the file, the column
and the rows or values, never an item's text.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from benevaudit.errors import InputError
from benevaudit.files import read_csv, read_parquet, read_text, require_columns
from benevaudit.gold.records import gold_dialogue, split_name
from benevaudit.gold.spec import LabelledDataSpec
from benevaudit.schema import Dialogue

EXPECTED = "a gold set with the columns data.text_column and data.label_column"
LABEL_CHARS = 24     # a longer value is more likely an item's text than a label


def read_jsonl_frame(file: Path) -> pd.DataFrame:
    """A JSONL file of one object per line as a frame; a line that is not an object is named."""
    rows = []
    for n, line in enumerate(read_text(file, "data.path", EXPECTED).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{file}:line {n}: not valid JSON ({e.msg}); expected one JSON "
                             "object per line") from None
        if not isinstance(row, dict):
            raise InputError(f"{file}:line {n}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return pd.DataFrame(rows)


def read_frame(spec: LabelledDataSpec) -> pd.DataFrame:
    """The file as a frame, by its extension; a file of another format is one error line."""
    file = Path(spec.path).expanduser()
    suffix = file.suffix.lower()
    if suffix == ".csv":
        frame = read_csv(file, "data.path", (), EXPECTED, dtype=str, keep_default_na=False)
    elif suffix == ".jsonl":
        frame = read_jsonl_frame(file)
    else:
        frame = read_parquet(file, "data.path", EXPECTED)
    wanted = [spec.text_column, spec.label_column] + [
        c for c in (spec.id_column, spec.context_column, spec.stratum_column, spec.split_column)
        if c]
    require_columns(list(frame.columns), wanted, f"data.path={spec.path}", EXPECTED)
    if frame.empty:
        raise InputError(f"data.path={spec.path}: no rows (expected {EXPECTED})")
    return frame


def raw_label(value: Any) -> str:
    """A raw label as text: ``1``, ``1.0`` and ``"1"`` all read ``1``; missing reads ``""``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def check_labels(raw: list[str], spec: LabelledDataSpec) -> None:
    """Every raw value mapped. An unmapped value is quoted only where it looks like a label
    (short, in more than one row), else named by its first data row: a text column given as
    ``data.label_column`` must not put an item's text in the message."""
    unmapped = Counter(v for v in raw if v not in spec.label_map)
    if not unmapped:
        return
    first: dict[str, int] = {}
    for i, v in enumerate(raw):
        first.setdefault(v, i + 1)
    listed = ", ".join(f"{v!r} ({n} rows)" if n > 1 and len(v) <= LABEL_CHARS else
                       f"the value of data row {first[v]} ({n} row(s), not quoted)"
                       for v, n in unmapped.most_common(5))
    raise InputError(f"data.path={spec.path}: column {spec.label_column!r} has {len(unmapped)} "
                     f"value(s) data.label_map does not map: {listed}; map each to N, OB, BB "
                     "or drop")


def item_ids(frame: pd.DataFrame, spec: LabelledDataSpec) -> list[str]:
    if spec.id_column is None:
        return [f"row-{i}" for i in range(len(frame))]
    ids = [raw_label(v) for v in frame[spec.id_column]]
    counts = Counter(ids)
    dupes = [(v, n) for v, n in counts.most_common() if n > 1]
    if dupes or "" in counts:
        rows = [i + 1 for i, v in enumerate(ids) if counts[v] > 1 or not v][:5]
        raise InputError(f"data.path={spec.path}: column {spec.id_column!r} has "
                         f"{len(dupes)} duplicate or empty id(s) (data rows {rows}, first "
                         "shown); each item needs its own id")
    return ids


STRATUM_CHARS, STRATA = 40, 100


def check_strata(frame: pd.DataFrame, spec: LabelledDataSpec) -> None:
    """A stratum names a group and goes into metric names: a column of long or mostly distinct
    values (the text column chosen by mistake) is refused before any value is written."""
    if not spec.stratum_column:
        return
    values = {raw_label(v) for v in frame[spec.stratum_column]}
    longest = max(len(v) for v in values)
    mostly_distinct = len(frame) >= 10 and len(values) > len(frame) / 2
    if longest > STRATUM_CHARS or len(values) > STRATA or mostly_distinct:
        raise InputError(f"data.path={spec.path}: data.stratum_column={spec.stratum_column!r} "
                         f"has {len(values)} distinct values in {len(frame)} rows, the longest "
                         f"{longest} characters; "
                         f"a stratum is a short group name (at most {STRATUM_CHARS} characters, "
                         f"{STRATA} groups)")


def read_labelled(spec: LabelledDataSpec) -> list[Dialogue]:
    """The mapped items, rows labelled ``drop`` left out."""
    frame = read_frame(spec)
    raw = [raw_label(v) for v in frame[spec.label_column]]
    check_labels(raw, spec)
    check_strata(frame, spec)
    ids = item_ids(frame, spec)
    out = []
    for i, (item_id, value) in enumerate(zip(ids, raw)):
        label = spec.label_map[value]
        if label == "drop":
            continue
        row = frame.iloc[i]
        where = f"data.path={spec.path}:row {i + 1}"
        meta = {"raw_label": value}
        if spec.stratum_column:
            meta["stratum"] = raw_label(row[spec.stratum_column]) or "none"
        split = split_name(row[spec.split_column] or None, where) if spec.split_column else None
        out.append(gold_dialogue(item_id, label, row[spec.text_column], where, source="labelled",
                                 context=row[spec.context_column] if spec.context_column else None,
                                 split=split, meta=meta))
    if not out:
        raise InputError(f"data.path={spec.path}: every row is dropped by data.label_map")
    return out
