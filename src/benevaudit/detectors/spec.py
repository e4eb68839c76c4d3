"""The ``detector`` block, the ``judges`` group a judge detector reads, and detect.py's
``eval`` and ``predictions`` blocks, typed (see :mod:`benevaudit.specs`)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import model_validator

from benevaudit.llm.spec import LLMSpec, SamplingSpec
from benevaudit.specs import Fraction, NonNegativeInt, PositiveInt, Share, Spec


class DetectorSpec(Spec):
    """One detector option (``conf/detector/``). Keys of one kind only are absent elsewhere;
    the kind's own checks (unit, aggregation, labels) run where it is built."""

    name: str
    kind: str
    threshold: Fraction = None            # type: ignore[assignment]
    demographics: bool = None             # type: ignore[assignment]  # judges
    categories: bool = None               # type: ignore[assignment]  # guards
    criteria: str = None                  # type: ignore[assignment]  # guards
    max_tokens: Optional[PositiveInt] = None                          # guards: null, their own
    score_prefill: Optional[str] = None                               # guards: null, their own
    parser: Literal["released", "lenient"] = None  # type: ignore[assignment]  # guards
    append_eos: bool = None               # type: ignore[assignment]  # classifiers
    eos_token: Optional[str] = None                                   # classifiers
    sampling: SamplingSpec = None         # type: ignore[assignment]  # judges, generate mode
    llm: LLMSpec = None                   # type: ignore[assignment]  # guards and judges

    @model_validator(mode="after")
    def files_readable(self) -> DetectorSpec:
        if self.llm is not None:
            self.llm.check_files("detector.llm")
        return self


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
    aggregation: Optional[str]
    threshold: Fraction
