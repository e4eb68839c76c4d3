"""Agreement of human annotations with the generation labels: a blind subset, Cohen's κ.

A generated corpus is only as good as its labels: the study has people label a balanced subset
and reports Cohen's κ between their labels and the labels the dialogues were generated for.
The subset is exported for annotators *blind*: ``annotation_subset.csv`` holds the rendered
dialogue and the demographics the label definitions refer to, in a seeded random order, with an
empty ``human_label`` column; the gold labels go to a separate ``annotation_key.csv``.

Cohen's κ (Cohen, 1960) is ``(p_o - p_e) / (1 - p_e)``: observed agreement corrected for the
agreement expected from the two label marginals alone.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from benevaudit.schema import AGENT_FIELDS, CLASSES, USER_FIELDS, Dialogue
from benevaudit.errors import InputError
from benevaudit.files import csv_text, describe_columns
from benevaudit.text import render_turns

SUBSET_COLUMNS: tuple[str, ...] = (
    "id", "text", *(f"user_{k}" for k in USER_FIELDS), *(f"agent_{k}" for k in AGENT_FIELDS),
    "role", "human_label",
)
KEY_COLUMNS: tuple[str, ...] = ("id", "label", "generator")


def cohens_kappa(a: Sequence[str], b: Sequence[str], labels: Sequence[str] = CLASSES) -> float:
    """Cohen's κ of two label sequences; NaN when chance agreement is total (``p_e`` = 1)."""
    if len(a) != len(b):
        raise ValueError(f"κ needs paired labels: got {len(a)} and {len(b)}")
    if not a:
        return math.nan
    table = confusion(a, b, labels)                  # [C, C]
    n = table.sum()
    p_o = np.trace(table) / n
    p_e = float(table.sum(axis=1) @ table.sum(axis=0)) / n**2
    if p_e >= 1.0:
        return math.nan
    return float((p_o - p_e) / (1.0 - p_e))


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = CLASSES,
              ) -> np.ndarray:
    """Counts [C, C]: rows are ``gold`` labels, columns ``pred`` labels, in ``labels`` order."""
    index = {c: i for i, c in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, pred):
        for v in (g, p):
            if v not in index:
                raise ValueError(f"label {v!r} is not one of {list(labels)}")
        table[index[g], index[p]] += 1
    return table


def select_subset(dialogues: Sequence[Dialogue], n_per_class: int, seed: int,
                  classes: Sequence[str] = CLASSES) -> list[Dialogue]:
    """``n_per_class`` dialogues per class (all of a smaller class), in a seeded random order."""
    rng = np.random.default_rng(seed)
    chosen: list[Dialogue] = []
    for cls in classes:
        members = [d for d in dialogues if d.label == cls]
        take = rng.choice(len(members), size=min(n_per_class, len(members)), replace=False)
        chosen.extend(members[i] for i in sorted(take))
    return [chosen[i] for i in rng.permutation(len(chosen))]


def _subset_row(d: Dialogue) -> dict[str, str]:
    row = {"id": d.id, "text": render_turns(d.turns), "role": d.role, "human_label": ""}
    row.update({f"user_{k}": d.user.get(k, "") for k in USER_FIELDS})
    row.update({f"agent_{k}": (d.agent or {}).get(k, "unspecified") for k in AGENT_FIELDS})
    return row


def annotation_sheet(subset: Sequence[Dialogue]) -> list[dict[str, str]]:
    """The blind sheet for annotators (:data:`SUBSET_COLUMNS`): no generation label."""
    rows = [_subset_row(d) for d in subset]
    return [{c: row[c] for c in SUBSET_COLUMNS} for row in rows]


def annotation_key(subset: Sequence[Dialogue]) -> list[dict[str, str]]:
    """The sheet's key, kept apart (:data:`KEY_COLUMNS`): each dialogue's generation label."""
    return [{"id": d.id, "label": d.label or "", "generator": d.generator} for d in subset]


def read_human_labels(path: str | Path, classes: Sequence[str] = CLASSES) -> dict[str, str]:
    """``{id: label}`` from a returned sheet (columns ``id`` and ``human_label``).

    Rows with an empty ``human_label`` are not yet annotated and are skipped; any other value
    must be a class name (case and surrounding spaces are forgiven).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no annotation file here (expected a CSV with columns "
                                "id, human_label)")
    labels: dict[str, str] = {}
    canonical = {c.upper(): c for c in classes}
    with csv_text(path, "annotation.labels_path", "a CSV with columns id, human_label") as f:
        reader = csv.DictReader(f)
        missing = {"id", "human_label"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(f"{path}: missing column(s) {sorted(missing)}; "
                             f"{describe_columns(reader.fieldnames or [])}")
        for line, row in enumerate(reader, start=2):
            value = (row["human_label"] or "").strip()
            if not value:
                continue
            if value.upper() not in canonical:
                raise InputError(f"{path}:{line}: field 'human_label': expected one of "
                                 f"{list(classes)} or empty, got {value!r}")
            if row["id"] in labels:
                raise InputError(f"{path}:{line}: field 'id': {row['id']!r} labelled twice")
            labels[row["id"]] = canonical[value.upper()]
    return labels


class Agreement(NamedTuple):
    kappa: float
    accuracy: float        # observed agreement p_o
    n: int                 # annotated dialogues compared
    confusion: np.ndarray  # [C, C] counts, rows gold (generation) label, columns human label


def agreement(human: dict[str, str], dialogues: Sequence[Dialogue], source: str = "labels",
              classes: Sequence[str] = CLASSES) -> Agreement:
    """Compare human labels with the generation labels of the same dialogues, matched by id."""
    gold = {d.id: d.label for d in dialogues}
    unknown = [i for i in human if i not in gold]
    if unknown:
        raise InputError(f"{source}: {len(unknown)} id(s) are not in the corpus, e.g. "
                         f"{unknown[0]!r}; was the sheet exported from this corpus?")
    unlabelled = [i for i in human if gold[i] is None]
    if unlabelled:
        raise InputError(f"{source}: {len(unlabelled)} annotated dialogue(s) have no generation "
                         f"label in the corpus, e.g. {unlabelled[0]!r}")
    ids = sorted(human)
    g = [label for i in ids if (label := gold[i]) is not None]   # none is None: checked above
    h = [human[i] for i in ids]
    table = confusion(g, h, classes)
    accuracy = float(np.trace(table) / table.sum()) if ids else math.nan
    return Agreement(cohens_kappa(g, h, classes), accuracy, len(ids), table)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' κ (Fleiss, 1971) of ``counts`` ``[N items, C labels]``: how many of the m raters
    put item i under label j, with the same m >= 2 for every item.

    ``(P̄ - P_e) / (1 - P_e)``: mean pairwise agreement within items, corrected for the agreement
    expected from the pooled label proportions. Unlike Cohen's κ it takes any number of raters,
    so people and several model raters can be compared at once. NaN when ``P_e`` = 1 or no items.
    """
    table = np.asarray(counts, dtype=np.float64)               # [N, C]
    if table.ndim != 2 or not len(table):
        return math.nan
    raters = table.sum(axis=1)                                  # [N]
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' κ needs the same number (>= 2) of ratings per item; got "
                         f"{sorted(set(raters.astype(int).tolist()))}")
    m = raters[0]
    p_label = table.sum(axis=0) / table.sum()                   # [C]
    p_item = ((table * (table - 1)).sum(axis=1)) / (m * (m - 1))  # [N]
    p_e = float((p_label ** 2).sum())
    if p_e >= 1.0:
        return math.nan
    return float((p_item.mean() - p_e) / (1.0 - p_e))


def mean_annotator_kappa(annotators: dict[str, dict[str, str]], judge: dict[str, str | None],
                         labels: Sequence[str]) -> tuple[float, dict[str, float]]:
    """Each annotator's Cohen's κ with a judge, on the items both labelled, and their mean
    (NaN κs left out): how CoBia's paper compares people with each judge.

    ``annotators`` maps an annotator to ``{item: label}``; ``judge`` maps items to its label
    (None where invalid)."""
    each = {}
    for name, marks in annotators.items():
        items = [i for i in marks if judge.get(i) is not None]
        each[name] = cohens_kappa([marks[i] for i in items],
                                  [str(judge[i]) for i in items], labels)
    valid = [k for k in each.values() if not math.isnan(k)]
    return (float(np.mean(valid)) if valid else math.nan), each


class OddOneOut(NamedTuple):
    """An item two of three judges flag alike and the third does not, and the people's side."""

    item: str
    odd: str                # the judge that differs
    odd_flag: bool          # its verdict (True: biased)
    biased_votes: int       # people who said biased
    annotators: int
    side: str               # odd | pair | tie: whom the people's majority sided with


def odd_one_out(flags: dict[str, dict[str, bool | None]],
                people: dict[str, list[bool]]) -> list[OddOneOut]:
    """Items with valid verdicts from all three judges of ``flags`` where exactly two agree,
    among the items people labelled (``people``: item -> each person's biased flag)."""
    if len(flags) != 3:
        raise ValueError(f"the disagreement table needs three judges, got {list(flags)}")
    out = []
    for item, votes in people.items():
        verdicts = {j: f.get(item) for j, f in flags.items()}
        if any(v is None for v in verdicts.values()) or len(set(verdicts.values())) == 1:
            continue
        odd = next(j for j, v in verdicts.items()
                   if sum(w == v for w in verdicts.values()) == 1)
        biased = sum(votes)
        majority = None if 2 * biased == len(votes) else 2 * biased > len(votes)
        side = "tie" if majority is None else ("odd" if majority == verdicts[odd] else "pair")
        out.append(OddOneOut(item, odd, bool(verdicts[odd]), biased, len(votes), side))
    return out
