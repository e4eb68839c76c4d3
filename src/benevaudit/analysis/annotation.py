"""The blind annotation subset with its written criteria (``annotation_subset.csv``,
``annotation_key.csv``, ``annotation_guide.md``) and the Cohen's κ of a returned sheet
(``annotation_confusion.csv``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benevaudit.analysis.annotation_guide import GUIDE_NAME, guide_text
from benevaudit.analysis.spec import AnnotationSpec
from benevaudit.analysis.tables import Part, csv_text
from benevaudit.metrics import agreement as agr
from benevaudit.schema import CLASSES, Dialogue

SHEET, KEY, CONFUSION = "annotation_subset.csv", "annotation_key.csv", "annotation_confusion.csv"


def annotation(dialogues: Sequence[Dialogue], spec: AnnotationSpec, seed: int) -> Part:
    """The blind subset with the study's criteria beside it (``annotation_guide.md``) and its
    key; returned labels scored against the generation labels."""
    subset = agr.select_subset(dialogues, spec.n_per_class, seed)
    files = {SHEET: csv_text(agr.annotation_sheet(subset), agr.SUBSET_COLUMNS),
             KEY: csv_text(agr.annotation_key(subset), agr.KEY_COLUMNS),
             GUIDE_NAME: guide_text(SHEET, len(subset))}
    if not spec.labels_path:
        return Part({}, files)
    result = returned_labels(dialogues, spec.labels_path)
    files[CONFUSION] = csv_text([{"label": c, **{f"human_{h}": int(result.confusion[i, j])
                                                 for j, h in enumerate(CLASSES)}}
                                 for i, c in enumerate(CLASSES)])
    return Part({"analysis/kappa": result.kappa, "analysis/human_agreement": result.accuracy,
                 "analysis/kappa_n": float(result.n)}, files)


def returned_labels(dialogues: Sequence[Dialogue], labels_path: str) -> agr.Agreement:
    """A returned label sheet against the corpus; a bad sheet fails with its file and line."""
    path = Path(labels_path)
    return agr.agreement(agr.read_human_labels(path), dialogues,
                         source=f"annotation.labels_path={path}")
