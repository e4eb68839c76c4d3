"""``python analyze.py``: how the classes of a generated corpus differ before any model sees them.

Flow: corpus → its size as the study's Table 2 gives it (dialogues, messages, mean turns, class
balance) → per-dialogue markers and MTLD (``markers.csv``) → Cohen's d of each biased class
against N (``marker_effects.csv``, ``marker_effects.png``) → Self-BLEU and Vendi per
generator × class (``diversity.csv``) and each class's mean over generators, the figures the
study reports (``diversity_by_class.csv``; Self-BLEU on the study's 0–100 scale) → blind annotation subset (``annotation_subset.csv``,
``annotation_key.csv``) and, when returned labels are given, Cohen's κ
(``annotation_confusion.csv``) → ``metrics.json``. Everything is written inside the run
directory; the computations are the ``benevaudit.analysis`` room's.
"""

from __future__ import annotations

import logging

from omegaconf import DictConfig

from benevaudit.analysis.annotation import annotation, returned_labels
from benevaudit.analysis.diversity import cells, diversity
from benevaudit.analysis.markers import corpus_size, marker_metrics, per_dialogue
from benevaudit.analysis.spec import AnalysisSpec
from benevaudit.analysis.tables import csv_text
from benevaudit.errors import InputError
from benevaudit.files import write_text_atomically
from benevaudit.generation.embedded import load_dialogues
from benevaudit.generation.spec import DataSpec
from benevaudit.outputs.analysis import write_part
from benevaudit.pipelines.config import completes, output_dir, validated, write_metrics
from benevaudit.schema import CLASSES

log = logging.getLogger(__name__)


class AnalyzeRun(AnalysisSpec):
    data: DataSpec


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    spec = validated(AnalyzeRun, cfg)    # names, numbers and files, before the slow parts
    out = output_dir(cfg)
    dialogues = load_dialogues(spec.data, cfg.paths.cache_dir)
    if spec.annotation.labels_path:   # the sheet, before the slow parts
        returned_labels(dialogues, spec.annotation.labels_path)
    labelled = [d for d in dialogues if d.label in CLASSES]
    if not labelled:
        raise InputError(f"data.path={spec.data.path}: no dialogue has a label of "
                         f"{list(CLASSES)}; nothing to compare")
    if len(labelled) < len(dialogues):
        log.info("%d unlabelled dialogues left out of the class comparisons",
                 len(dialogues) - len(labelled))
    rows = per_dialogue(labelled, spec.mtld, spec.progress)
    write_text_atomically(out / "markers.csv", csv_text(rows))
    metrics = corpus_size(labelled)
    metrics |= write_part(out, marker_metrics(rows, spec.markers.reference))   # each part
    metrics |= write_part(out, diversity(rows, cells(labelled), spec))        # as it is made
    metrics |= write_part(out, annotation(dialogues, spec.annotation, spec.seed))
    write_metrics(metrics, out / "metrics.json")
    log.info("analysis of %d dialogues written to %s", len(labelled), out)
    return metrics
