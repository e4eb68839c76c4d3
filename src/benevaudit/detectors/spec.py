"""The ``detector`` block, one spec per kind, the ``judges`` group a judge detector reads, and
detect.py's ``eval`` and ``predictions`` blocks, typed (see :mod:`benevaudit.specs`).

``detector.kind`` picks the spec: ``sequence_classifier``, a guard (every kind of
``detectors/guards/``: its spec is :class:`GuardSpec`), ``judge``, ``finetuned`` or ``external``.
Each lists only its own keys, so a misspelt key is refused with that kind's keys listed.
``DetectorSpec``, their union, and ``KINDS`` are read from the registry
(:mod:`benevaudit.detectors.registry`) when first asked for: each kind's module registers its
spec there, and those modules read the spec classes of this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator

from benevaudit.detectors.guards.registry import GUARD_FORMATS, GUARD_KINDS
from benevaudit.detectors.judge_prompts import Strategy
from benevaudit.detectors.kinds import DETECTORS
from benevaudit.detectors.units import Aggregation, UnitKind
from benevaudit.errors import ConfigError
from benevaudit.llm.spec import LLMSpec, SamplingSpec
from benevaudit.specs import Fraction, NonNegativeInt, PositiveInt, Share, Spec

if TYPE_CHECKING:
    GuardKind = str
else:       # every guard module's kind (``detectors/guards/``), listed where they are found
    GuardKind = Literal[GUARD_KINDS]
Mode = Literal["score", "generate"]


class DecidingSpec(Spec):
    """What every detector that decides from its own units names: the unit and the rule."""

    name: str
    unit: UnitKind
    aggregation: Aggregation


class ClassifierSpec(DecidingSpec):
    """``kind: sequence_classifier``: Regard, ToxiGen, BeaverTails."""

    kind: Literal["sequence_classifier"]
    source: str                             # a hub id (cached) or a local directory
    trigger: Annotated[list[str], Field(min_length=1)]
    label_names: dict[str, str]
    threshold: Fraction
    text_format: str
    max_length: PositiveInt
    append_eos: bool
    eos_token: Optional[str]                # that EOS written out (dry runs); null: unchecked
    batch_size: PositiveInt
    device: str


class GuardSpec(DecidingSpec):
    """A generative guard: ``kind`` names its module under ``detectors/guards/``."""

    kind: GuardKind
    checkpoint: str
    threshold: Fraction
    mode: Mode
    trigger: str
    criteria: str
    categories: bool
    max_tokens: PositiveInt                 # generate mode's reply cap
    score_prefill: str                      # score mode: what the reply holds before the label
    parser: Literal["released", "lenient"]   # lenient: only guards that have such a reader
    llm: LLMSpec

    @model_validator(mode="after")
    def lenient_reader_exists(self) -> GuardSpec:
        """Only some guards have a reader laxer than their release's."""
        if self.parser == "lenient" and GUARD_FORMATS[self.kind].lenient is None:
            lenient = [k for k, f in GUARD_FORMATS.items() if f.lenient is not None]
            raise ConfigError(f"detector.parser=lenient for guard {self.kind!r}: expected "
                              f"'released' (every guard) or 'lenient' (only {lenient})")
        return self

    @model_validator(mode="after")
    def files_readable(self) -> GuardSpec:
        self.llm.check_files("detector.llm")
        return self


class JudgeSpec(DecidingSpec):
    """``kind: judge``: a prompted LLM judge (or the ensemble of the judges group)."""

    kind: Literal["judge"]
    unit: Literal["dialogue"]               # a judge reads the whole dialogue
    strategy: Strategy
    demographics: bool
    mode: Mode
    ties: Literal["order", "first_judge", "invalid"]
    judge: Optional[str]                    # one judge of the group, by name
    sampling: SamplingSpec
    llm: LLMSpec                            # non-null keys override the one judge's block

    @model_validator(mode="after")
    def files_readable(self) -> JudgeSpec:
        self.llm.check_files("detector.llm")
        return self


class FinetunedSpec(DecidingSpec):
    """``kind: finetuned``: the audit's own classifier (``ckpt=``)."""

    kind: Literal["finetuned"]
    unit: Literal["dialogue"]               # it reads the whole dialogue
    max_length: Optional[PositiveInt]       # null: the training run's
    head_tokens: Optional[NonNegativeInt]   # null: the training run's
    batch_size: PositiveInt


class ExternalSpec(Spec):
    """``kind: external``: predictions made elsewhere (the ``predictions`` block)."""

    name: str
    kind: Literal["external"]


def detector_tag(block: Any) -> Any:
    """The ``kind`` a ``detector`` block is told apart by."""
    return block.get("kind") if isinstance(block, dict) else getattr(block, "kind", None)


if TYPE_CHECKING:
    DetectorSpec = Union[ClassifierSpec, GuardSpec, JudgeSpec, FinetunedSpec, ExternalSpec]
    KINDS: dict[str, type[Spec]]          # each kind -> its spec
    FAMILIES: tuple[type[Spec], ...]      # the distinct specs


def __getattr__(name: str) -> Any:
    """``DetectorSpec`` (one member per registered kind, each guard kind tagged with its own
    name), ``KINDS`` and ``FAMILIES``, from the registry once its modules are read."""
    if name == "DetectorSpec":
        return DETECTORS.union(read=detector_tag)
    if name == "KINDS":
        return DETECTORS.specs()
    if name == "FAMILIES":
        return tuple(dict.fromkeys(DETECTORS.specs().values()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class JudgeModel(Spec):
    name: str
    llm: LLMSpec


class JudgesSpec(Spec):
    """The ``judges`` group: the LLMs a judge detector asks, in order."""

    name: str
    models: list[JudgeModel]

    @model_validator(mode="after")
    def files_readable(self) -> JudgesSpec:
        for i, judge in enumerate(self.models):
            judge.llm.check_files(f"judges.models[{i}].llm")
        return self


class EvalSpec(Spec):
    """The evaluation set (``detectors.evaluation_set``): a seeded share of the corpus."""

    fraction: Share
    limit: Optional[PositiveInt]
    seed: NonNegativeInt


class PredictionsSpec(Spec):
    """``detector=external``: a predictions file made elsewhere, and how it decides."""

    path: Optional[str]
    aggregation: Optional[Aggregation]
    threshold: Fraction
