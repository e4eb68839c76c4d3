"""Which detector a ``detector`` block names: ``detector.kind``, read from the package's modules.

Every module of ``benevaudit.detectors`` that declares ``KIND`` (a :class:`DetectorKind`) is one
family of kinds: how it is built from its block, and what it records in a dry run. Adding a
detector kind is one module with its ``KIND`` and one ``conf/detector/`` YAML; nothing else lists
it (a guard is one module of ``guards/``, which the guard family reads the same way).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from benevaudit.detectors.base import Checkpoint, Detector
from benevaudit.llm.dry_run import RequestLog, scope
from benevaudit.schema import Dialogue

if TYPE_CHECKING:   # the spec module lists the kinds this registry finds, so it is read after it
    from benevaudit.detectors.spec import DetectorSpec, JudgeModel, PredictionsSpec


PACKAGE = __name__.rpartition(".")[0]          # benevaudit.detectors
FOLDER = Path(__file__).parent


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
    """One detector family: the ``kind`` values it builds, how (from its own spec class ``S``),
    and its dry run."""

    kinds: tuple[str, ...]
    build: Callable[[S, BuildContext], Detector]
    record: Callable[[S, BuildContext, Sequence[Dialogue], RequestLog], None]
    reads_corpus: bool = True          # False: decisions come from a file (``external``)


@cache
def detector_kinds() -> dict[str, DetectorKind[Any]]:
    """``detector.kind`` -> its family, from every module of the package that declares KIND."""
    found: dict[str, DetectorKind[Any]] = {}
    for info in pkgutil.walk_packages([str(FOLDER)], f"{PACKAGE}."):
        kind = getattr(importlib.import_module(info.name), "KIND", None)
        if not isinstance(kind, DetectorKind):
            continue
        for name in kind.kinds:
            if name in found:
                raise TypeError(f"detector kind {name!r} is declared twice (in {info.name})")
            found[name] = kind
    return found


def kind_of(spec: DetectorSpec) -> DetectorKind[Any]:
    """The family of a ``detector`` spec (its kind is one of them: the spec's union is built
    from the same modules)."""
    return detector_kinds()[spec.kind]


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
