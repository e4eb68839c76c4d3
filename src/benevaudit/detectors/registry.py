"""Which detector a ``detector`` block names: ``detector.kind``, read from the package's modules.

``DETECTORS`` is a :class:`benevaudit.registry.Registry`: a module of ``benevaudit.detectors``
registers each kind it builds with its spec and its :class:`DetectorKind` (how it is built from
its block, and what it records in a dry run) in one call,
``DETECTORS.add("judge", JudgeSpec, KIND)``. Adding a detector kind is one module and one
``conf/detector/`` YAML; nothing else lists it (a guard is one module of ``guards/``, and every
guard is a detector kind through the guard family, ``guards/detector.py``). The ``detector``
block's type, ``DetectorSpec``, is the union of the registered specs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from benevaudit.detectors.base import Checkpoint, Detector
from benevaudit.detectors.kinds import DETECTORS
from benevaudit.llm.dry_run import RequestLog, scope
from benevaudit.schema import Dialogue

if TYPE_CHECKING:   # the spec module lists the kinds this registry finds, so it is read after it
    from benevaudit.detectors.spec import DetectorSpec, JudgeModel, PredictionsSpec



__all__ = ["DETECTORS", "BuildContext", "DetectorKind", "detector_kinds", "kind_of",
           "record_by_running"]


@dataclass(frozen=True)
class BuildContext:
    """What a detector may need beside its block: the judges group's models, the request
    cache, the trained classifier (``ckpt``), the ``predictions`` block, the run's seed."""

    judges: Sequence[JudgeModel] = field(default_factory=list)
    cache: str | None = None
    checkpoint: Checkpoint | None = None
    predictions: PredictionsSpec | None = None
    seed: int = 0


S = TypeVar("S")


@dataclass(frozen=True)
class DetectorKind(Generic[S]):
    """How a kind is built (from its own spec class ``S``), and its dry run."""

    build: Callable[[S, BuildContext], Detector]
    record: Callable[[S, BuildContext, Sequence[Dialogue], RequestLog], None]
    reads_corpus: bool = True          # False: decisions come from a file (``external``)


def detector_kinds() -> dict[str, DetectorKind[Any]]:
    """``detector.kind`` -> how it is built, from every module of the package."""
    return {kind: entry.builder() for kind, entry in DETECTORS.entries().items()}


def kind_of(spec: DetectorSpec) -> DetectorKind[Any]:
    """How a ``detector`` spec is built (its kind is one of them: the spec's union is built
    from the same registry)."""
    kind: DetectorKind[Any] = DETECTORS[spec.kind]
    return kind


def record_by_running(detector: Detector, dialogues: Sequence[Dialogue], request_log: RequestLog,
                      identities: Callable[[Dialogue], list[dict[str, Any]]]) -> None:
    """A model detector's dry run: it runs against the recording models, each dialogue's
    requests named by ``identities`` (its units, or the judges in group order)."""
    try:
        for d in dialogues:
            with scope(id=d.id, detector=detector.name):
                request_log.expect(identities(d))
                detector.detect([d])
    finally:
        detector.close()
