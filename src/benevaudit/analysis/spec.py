"""The dataset analysis's blocks: ``markers``, ``mtld``, ``self_bleu``, ``vendi`` and
``annotation``, checked before the slow parts (an embedder is read, a returned sheet found)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional

from pydantic import Field, model_validator

from benevaudit.encoders.embeddings import EMBEDDERS
from benevaudit.errors import ConfigError
from benevaudit.files import check_model_dir
from benevaudit.specs import NonNegativeInt, PositiveInt, RunSpec, SequenceLength, Spec


class MarkersSpec(Spec):
    reference: Literal["N", "OB", "BB"]   # Cohen's d of every other class against this one


class MtldSpec(Spec):
    threshold: Annotated[float, Field(gt=0, lt=1)]
    speaker: Literal["all", "agent", "user"]   # whose words a dialogue's MTLD is computed over


class SelfBleuSpec(Spec):
    n_seeds: PositiveInt
    pool_size: Annotated[int, Field(ge=2)]
    n_hypotheses: PositiveInt
    n_references: PositiveInt
    max_words: PositiveInt
    smooth: Literal["exp", "none"]   # metrics.diversity.SMOOTH_METHODS


class VendiSpec(Spec):
    embedder: str                  # a packaged embedder's name, a hub id, or a model directory
    max_per_cell: PositiveInt
    batch_size: PositiveInt
    max_length: SequenceLength
    device: Literal["auto", "cpu", "cuda"]   # auto: cuda when available

    @model_validator(mode="after")
    def loadable(self) -> VendiSpec:
        if self.embedder not in EMBEDDERS:
            if not Path(self.embedder).is_dir():
                raise ConfigError(f"vendi.embedder={self.embedder!r}: not one of "
                                  f"{', '.join(EMBEDDERS)} and not a local model directory")
            check_model_dir("vendi.embedder", Path(self.embedder))
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
