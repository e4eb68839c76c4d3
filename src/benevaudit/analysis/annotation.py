"""The blind annotation subset with its written criteria (``annotation_subset.csv``,
``annotation_key.csv``, ``annotation_guide.md``) and the Cohen's κ of a returned sheet
(``annotation_confusion.csv``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benevaudit.analysis.annotation_guide import GUIDE_NAME, write_guide
from benevaudit.analysis.spec import AnnotationSpec
from benevaudit.analysis.tables import write_csv
from benevaudit.metrics import agreement as agr
from benevaudit.schema import CLASSES, Dialogue


def annotation(dialogues: Sequence[Dialogue], spec: AnnotationSpec, seed: int, out: Path,
               ) -> dict[str, float]:
    """Export the blind subset with the study's criteria beside it (``annotation_guide.md``);
    score returned labels against the generation labels."""
    subset = agr.select_subset(dialogues, spec.n_per_class, seed)
    agr.write_annotation_subset(subset, out / "annotation_subset.csv",
                                out / "annotation_key.csv")
    write_guide(out / GUIDE_NAME, "annotation_subset.csv", len(subset))
    if not spec.labels_path:
        return {}
    result = returned_labels(dialogues, spec.labels_path)
    write_csv([{"label": c, **{f"human_{h}": int(result.confusion[i, j])
                                for j, h in enumerate(CLASSES)}}
                for i, c in enumerate(CLASSES)], out / "annotation_confusion.csv")
    return {"analysis/kappa": result.kappa, "analysis/human_agreement": result.accuracy,
            "analysis/kappa_n": float(result.n)}


def returned_labels(dialogues: Sequence[Dialogue], labels_path: str) -> agr.Agreement:
    """A returned label sheet against the corpus; a bad sheet fails with its file and line."""
    path = Path(labels_path)
    return agr.agreement(agr.read_human_labels(path), dialogues,
                         source=f"annotation.labels_path={path}")
