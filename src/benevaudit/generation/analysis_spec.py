"""The dataset analysis's blocks: ``markers``, ``mtld``, ``self_bleu``, ``vendi`` and
``annotation``, checked before the slow parts (an embedder is read, a returned sheet found)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from pydantic import Field, model_validator

from benevaudit.encoders.embeddings import EMBEDDERS
from benevaudit.errors import ConfigError
from benevaudit.files import check_model_dir
from benevaudit.metrics.diversity import SMOOTH_METHODS
from benevaudit.schema import CLASSES
from benevaudit.specs import NonNegativeInt, PositiveInt, SequenceLength, RunSpec, Spec

MTLD_SPEAKERS = ("all", "agent", "user")
VENDI_DEVICES = ("auto", "cpu", "cuda")

class MarkersSpec(Spec):
    reference: str                 # Cohen's d of every other class against this one

    @model_validator(mode="after")
    def a_class(self) -> MarkersSpec:
        if self.reference not in CLASSES:
            raise ConfigError(f"markers.reference must be one of {list(CLASSES)}, got "
                              f"{self.reference!r}")
        return self

class MtldSpec(Spec):
    threshold: Annotated[float, Field(gt=0, lt=1)]
    speaker: str

    @model_validator(mode="after")
    def known_speaker(self) -> MtldSpec:
        if self.speaker not in MTLD_SPEAKERS:
            raise ConfigError(f"mtld.speaker={self.speaker!r}; valid: {', '.join(MTLD_SPEAKERS)}")
        return self

class SelfBleuSpec(Spec):
    n_seeds: PositiveInt
    pool_size: Annotated[int, Field(ge=2)]
    n_hypotheses: PositiveInt
    n_references: PositiveInt
    max_words: PositiveInt
    smooth: str

    @model_validator(mode="after")
    def known_smoothing(self) -> SelfBleuSpec:
        if self.smooth not in SMOOTH_METHODS:
            raise ConfigError(f"self_bleu.smooth={self.smooth!r}; valid: "
                              f"{', '.join(SMOOTH_METHODS)}")
        return self

class VendiSpec(Spec):
    embedder: str                  # a packaged embedder's name, a hub id, or a model directory
    max_per_cell: PositiveInt
    batch_size: PositiveInt
    max_length: SequenceLength
    device: str

    @model_validator(mode="after")
    def loadable(self) -> VendiSpec:
        if self.embedder not in EMBEDDERS:
            if not Path(self.embedder).is_dir():
                raise ConfigError(f"vendi.embedder={self.embedder!r}: not one of "
                                  f"{', '.join(EMBEDDERS)} and not a local model directory")
            check_model_dir("vendi.embedder", Path(self.embedder))
        if self.device not in VENDI_DEVICES:
            raise ConfigError(f"vendi.device={self.device!r}; valid: {', '.join(VENDI_DEVICES)}")
        return self

class AnnotationSpec(Spec):
    n_per_class: PositiveInt
    labels_path: Optional[str] = None    # a returned sheet: columns id, human_label

    @model_validator(mode="after")
    def sheet_exists(self) -> AnnotationSpec:
        if self.labels_path and not Path(self.labels_path).is_file():
            raise ConfigError(f"annotation.labels_path={self.labels_path}: no such file "
                              "(expected the CSV sheet with columns id, human_label)")
        return self

class AnalysisSpec(RunSpec):
    """Every option of ``analyze.py`` but the corpus."""

    seed: NonNegativeInt
    progress: bool
    markers: MarkersSpec
    mtld: MtldSpec
    self_bleu: SelfBleuSpec
    vendi: VendiSpec
    annotation: AnnotationSpec
