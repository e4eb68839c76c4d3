"""Detectors: one interface over sequence classifiers, generative guards and LLM judges.

``build_detector(spec, ...)`` turns a ``detector`` spec (:mod:`benevaudit.detectors.spec`) into
a ``Detector``. ``kind`` picks the family, from the modules that register it with ``DETECTORS``
(:mod:`benevaudit.detectors.registry`: a new kind is one module and one YAML):

| kind | family | module |
| --- | --- | --- |
| ``sequence_classifier`` | Regard, ToxiGen, BeaverTails | ``classifiers`` |
| ``llama_guard3`` ``granite_guardian`` (3.3) ``granite_guardian41`` ``wildguard`` ``qwen3guard`` | generative guards, one module each | ``guards/`` |
| ``judge`` | prompted LLM judges and their ensemble | ``judges`` |
| ``finetuned`` | the audit's own trained classifier (``ckpt=``) | ``finetuned`` |
| ``external`` | predictions made elsewhere (``predictions.path=``) | ``external`` |

``evaluation_set`` picks the dialogues a detector is scored on; ``Detector.predictions`` gives
the rows of a run's ``predictions.parquet``. Heavy imports happen inside the detectors.

This room may import ``llm``, ``encoders``, ``metrics`` and the core, and (for the fine-tuned
classifier only) the audit's evaluation pass; never ``report`` or ``pipelines``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benevaudit.detectors.base import (
    Checkpoint,
    Detector,
    DialogueResult,
    UnitVerdict,
    predictions_frame,
)
from benevaudit.detectors.classifiers import SequenceClassifierDetector
from benevaudit.detectors.evaluation import evaluation_set
from benevaudit.detectors.finetuned import FinetunedDetector
from benevaudit.detectors.external import ExternalDetector, external_detector, read_external
from benevaudit.detectors.guards.detector import GuardDetector, guard_llm_block
from benevaudit.detectors.guards.registry import GUARD_KINDS, guard_format
from benevaudit.detectors.judges import JudgeDetector, judge_llm_blocks
from benevaudit.detectors.registry import DETECTORS, BuildContext, detector_kinds, kind_of
from benevaudit.detectors.spec import JudgeModel, PredictionsSpec
from benevaudit.detectors.units import AGGREGATIONS, UNITS, Unit, aggregate, make_units

if TYPE_CHECKING:   # the union of the registered kinds, made once the package is read
    from benevaudit.detectors.spec import DetectorSpec


def __getattr__(name: str) -> Any:
    if name == "KINDS":         # every detector.kind, from the modules that declare them
        return tuple(detector_kinds())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def reads_corpus(spec: DetectorSpec) -> bool:
    """Whether the detector decides the corpus's dialogues (``external`` reads a file instead)."""
    return kind_of(spec).reads_corpus


def build_detector(spec: DetectorSpec, judges: Sequence[JudgeModel] = (),
                   cache: str | None = None, checkpoint: Checkpoint | None = None,
                   predictions: PredictionsSpec | None = None, seed: int = 0) -> Detector:
    """A detector from its spec, built by the module of its kind. ``judges`` are the judges
    group's models, ``checkpoint`` the trained classifier (``detector=finetuned``),
    ``predictions`` the ``predictions`` block (``detector=external``)."""
    context = BuildContext(list(judges), cache, checkpoint, predictions, seed)
    return kind_of(spec).build(spec, context)


__all__ = ["AGGREGATIONS", "DETECTORS", "BuildContext", "Checkpoint", "Detector", "DialogueResult",
           "ExternalDetector", "FinetunedDetector", "GUARD_KINDS", "GuardDetector", "JudgeDetector", "KINDS",
           "SequenceClassifierDetector", "UNITS", "Unit", "UnitVerdict", "aggregate",
           "build_detector", "evaluation_set", "external_detector",
           "guard_format", "guard_llm_block", "judge_llm_blocks",
           "make_units", "predictions_frame", "read_external", "reads_corpus"]
