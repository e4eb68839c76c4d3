"""``data=edos``: SemEval-2023 Task 10's 20,000 expert-labelled posts (``rewire-online/edos``).

The EDOS codebook maps to the study's classes: ``not sexist`` is N; the threats (1.1, 1.2) and
derogation (2.1–2.3) vectors are OB; 3.3 "backhanded gendered compliments" and 3.4
"condescending explanations or unwelcome advice" are BB (``data.bb_vectors``: 3.3 alone is the
strict reading). The other sexist vectors (3.1, 3.2, 4.1, 4.2) are descriptive strata: kept
unlabelled when ``data.strata`` is true, scored per stratum, never in macro-F1. Each post is
one agent turn; ``meta`` holds its category, vector, the EDOS split and its stratum (the
vector's code, ``none`` for not sexist).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from benevaudit.errors import InputError
from benevaudit.files import csv_text, require_columns
from benevaudit.gold.records import gold_dialogue, split_name
from benevaudit.gold.spec import EDOS_FILE, EdosDataSpec
from benevaudit.schema import Dialogue

COLUMNS = ("rewire_id", "text", "label_sexist", "label_category", "label_vector", "split")
EXPECTED = "EDOS's edos_labelled_aggregated.csv (rewire_id, text, label_sexist, " \
           "label_category, label_vector, split)"
CODE = re.compile(r"^(\d+\.\d+)\b")


def edos_file(spec: EdosDataSpec) -> Path:
    return Path(spec.path).expanduser() / EDOS_FILE


def edos_label(sexist: str, vector: str, spec: EdosDataSpec, where: str) -> tuple[str | None, str]:
    """(class or None for a stratum, the stratum: the vector's code or ``none``)."""
    if sexist == "not sexist":
        if vector != "none":
            raise InputError(f"{where}: 'not sexist' with vector {vector[:4]!r}; expected none")
        return "N", "none"
    if sexist != "sexist":
        raise InputError(f"{where}: label_sexist is none of ['not sexist', 'sexist']")
    match = CODE.match(vector)
    if match is None:
        raise InputError(f"{where}: label_vector has no codebook code (expected e.g. "
                         "'3.3 backhanded gendered compliments')")
    code = match.group(1)
    if code in spec.ob_vectors:
        return "OB", code
    if code in spec.bb_vectors:
        return "BB", code
    return None, code


def read_edos(spec: EdosDataSpec) -> list[Dialogue]:
    """Every post as a record; posts of the strata only when ``spec.strata``."""
    file = edos_file(spec)
    rows = csv.DictReader(csv_text(file, "data.path", EXPECTED))
    require_columns(list(rows.fieldnames or []), COLUMNS, str(file), EXPECTED)
    out: list[Dialogue] = []
    for line, row in enumerate(rows, start=2):
        where = f"{file}:line {line}"
        short = [c for c in COLUMNS if not isinstance(row.get(c), str)]
        if short or None in row:
            raise InputError(f"{where}: the row's fields do not match the header's (a row cut "
                             "short, or an unquoted comma)")
        label, stratum = edos_label(row["label_sexist"], row["label_vector"], spec, where)
        if label is None and not spec.strata:
            continue
        out.append(gold_dialogue(
            row["rewire_id"], label, row["text"], where, source="edos",
            context=spec.wrap_user_turn, split=split_name(row["split"], where),
            meta={"category": row["label_category"], "vector": row["label_vector"],
                  "edos_split": row["split"], "stratum": stratum}))
    if not out:
        raise InputError(f"{file}: no post to score (expected {EXPECTED})")
    return out
