"""The ``probe`` block and the ``target`` the probe asks, typed (see :mod:`benevaudit.specs`).

Keys of one probe kind only (CoBia's ``sentences`` and ``switches``, FairDialogue's ``k`` and
``rounds``) are absent from the others' blocks; a probe reads the rest of its block itself.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import ConfigDict, Field, model_validator

from benevaudit.llm.spec import LLMSpec, SamplingSpec
from benevaudit.specs import Fraction, PositiveInt, Spec


class SwitchesSpec(Spec):
    """CoBia's filter-evasion tricks in the seeded final question."""

    anaphora: bool
    index: bool
    disavowal: bool


class ProbeSampling(SamplingSpec):
    """FairDialogue's sampling: a reply budget, or ``auto`` (sized from the list length K)."""

    max_tokens: Annotated[Union[PositiveInt, Literal["auto"]],   # type: ignore[assignment]
                          Field(description="a positive integer or auto")] = None


class RaterSpec(Spec):
    """One of CoBia's judges (``probe.judges.<name>``): its kind, decoding and llm block."""

    kind: str
    variant: str
    mode: str
    max_tokens: Optional[PositiveInt]     # null: no reply cap
    top_p: Fraction
    llm: Optional[LLMSpec]                # null: a keyword refusal rater needs no model


class RefusalSpec(Spec):
    """CoBia's ``probe.refusal``: what the refusal raters read of a DAN reply."""

    model_config = ConfigDict(extra="forbid")

    dan_scope: Literal["jailbroken", "released"]


class AnnotationSpec(Spec):
    """CoBia's ``probe.annotation``: the blind sheets written for human validation."""

    model_config = ConfigDict(extra="forbid")

    size: Optional[PositiveInt]           # outputs per prompt group; null: no sheets
    groups: list[Literal["hcc", "scc", "zero_shot", "roleplay", "dan"]]


class AnswersSpec(Spec):
    path: Optional[str]                   # a CSV of answers to score instead of asking


class ProbeSpec(Spec):
    """One probe option (``conf/probe/``): ``family`` and, for FairDialogue, ``kind``."""

    family: str
    kind: str = None                      # type: ignore[assignment]  # FairDialogue
    sentences: PositiveInt = None         # type: ignore[assignment]  # CoBia
    max_tokens: Optional[PositiveInt] = None                          # CoBia: null, no cap
    switches: SwitchesSpec = None         # type: ignore[assignment]  # CoBia
    judges: dict[str, Optional[RaterSpec]] = None  # type: ignore[assignment]  # CoBia
    refusal: RefusalSpec = None           # type: ignore[assignment]  # CoBia
    annotation: AnnotationSpec = None     # type: ignore[assignment]  # CoBia
    neutral: bool = None                  # type: ignore[assignment]  # FairDialogue
    mode: Literal["text", "audio"] = None  # type: ignore[assignment]  # FairDialogue
    k: PositiveInt = None                 # type: ignore[assignment]  # recommendation
    rounds: PositiveInt = None            # type: ignore[assignment]  # feedback
    sampling: ProbeSampling = None        # type: ignore[assignment]  # FairDialogue
    answers: AnswersSpec = None           # type: ignore[assignment]  # FairDialogue

    @model_validator(mode="after")
    def files_readable(self) -> ProbeSpec:
        for name, rater in (self.judges or {}).items():
            if rater is not None and rater.llm is not None:
                rater.llm.check_files(f"probe.judges.{name}.llm")
        return self

    def asks_target(self) -> bool:
        """False when the probe scores a CSV of answers and loads no target."""
        return not (self.answers is not None and self.answers.path)


class TargetSpec(Spec):
    """The model under test: its ``llm`` block, and for CoBia's released DAN its maker's
    names (``company``, ``model_company``)."""

    name: str
    llm: LLMSpec
    # a speech preset's switch for spoken replies (target.audio_out=true); its llm.audio_out
    # follows it (${..audio_out}), and the llm block is what the backend reads
    audio_out: Optional[bool] = None
