"""The ``probe`` block, one spec per kind, and the ``target`` the probe asks, typed (see
:mod:`benevaudit.specs`).

``probe.family`` picks CoBia, FairDialogue or FairMT-Bench, and FairDialogue's ``probe.kind`` one of its
three protocols; each spec lists its kind's keys only, so a misspelt key names the valid ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Optional, Union, get_args

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.llm.spec import LLMSpec
from benevaudit.probes.fairmt.spec import FairMTSpec
from benevaudit.probes.judge_validation import JudgeValidationSpec
from benevaudit.specs import (Fraction, NonNegative, NonNegativeInt, Positive, PositiveInt,
                              Share, Spec)


class SwitchesSpec(Spec):
    """CoBia's filter-evasion tricks in the seeded final question."""

    anaphora: bool
    index: bool
    disavowal: bool


CobiaMethod = Literal["hcc", "scc", "zero_shot", "roleplay", "dan"]
# the study's six categories (``probes.cobia.dataset.CATEGORIES``)
Category = Literal["gender", "race", "religion", "national_origin", "sexual_orientation", "others"]
RaterKind = Literal["bias", "nli", "guard", "refusal"]
RaterVariant = Literal["release", "project", "granite_release", "social_bias",
                       "keywords_release", "keywords_corrected", "llm"]
RaterMode = Literal["generate", "score"]
DecisionTask = Literal["award", "interview", "assignment"]
RecommendationTask = Literal["course", "entertainment", "occupation"]
DecisionTasks = Annotated[list[DecisionTask], Field(min_length=1, description=(
    f"a non-empty list of decision tasks, each one of {list(get_args(DecisionTask))}"))]
RecommendationTasks = Annotated[list[RecommendationTask], Field(min_length=1, description=(
    f"a non-empty list of recommendation tasks, each one of "
    f"{list(get_args(RecommendationTask))}"))]


class ProbeSampling(Spec):
    """FairDialogue's sampling: a reply budget, or ``auto`` (sized from the list length K)."""

    temperature: NonNegative
    top_p: Share
    max_tokens: Annotated[Union[PositiveInt, Literal["auto"]],
                          Field(description="a positive integer or auto")]
    seed: Optional[NonNegativeInt] = None  # absent: the run's seed


class RaterSpec(Spec):
    """One of CoBia's judges (``probe.judges.<name>``): its kind, decoding and llm block.
    ``variant: auto`` is the release's own where its judges/ is there; which variants a kind
    has is checked where the rater is built (``cobia.raters.VARIANTS``)."""

    kind: RaterKind
    variant: Union[Literal["auto"], RaterVariant]
    mode: RaterMode
    max_tokens: Optional[PositiveInt]     # null: no reply cap
    top_p: Fraction
    llm: Optional[LLMSpec]                # null: a keyword refusal rater needs no model


class RefusalSpec(Spec):
    """CoBia's ``probe.refusal``: what the refusal raters read of a DAN reply."""


    dan_scope: Literal["jailbroken", "released"]


class AnnotationSpec(Spec):
    """CoBia's ``probe.annotation``: the blind sheets written for human validation."""


    size: Optional[PositiveInt]           # outputs per prompt group; null: no sheets
    groups: list[CobiaMethod]


class AnswersSpec(Spec):
    path: Optional[str]                   # a CSV of answers to score instead of asking
    # two rows for one cell: an error, or kept as the release's samples keep them (averaged or
    # concatenated in the released/* metrics; the first in the others)
    repeats: Literal["error", "release"]


class CobiaData(Spec):
    path: Optional[str]                   # a clone of the release, or its three JSON files
    one_descriptor: Literal["skip", "same_category"]
    category_map: Annotated[Optional[dict[str, Category]], Field(description=(
        f"null (the documented table) or a mapping {{bias_type: category}}, each category one "
        f"of {list(get_args(Category))}"))]


class CobiaSpec(Spec):
    """``probe=cobia*``: constructed-conversation attacks, scored by the judges."""

    family: Literal["cobia"]
    methods: Annotated[list[CobiaMethod], Field(min_length=1)]
    layout: Literal["auto", "official", "seeded"]
    data: CobiaData
    sentences: PositiveInt
    switches: SwitchesSpec
    dan_template: Optional[str]
    human_labels: Optional[str]
    max_tokens: Optional[PositiveInt]     # null: no cap
    top_p: Fraction
    judge_url: Optional[str] = None       # cobia_paper: the Ollama server its judges sit behind
    judges: dict[str, Optional[RaterSpec]]
    refusal: RefusalSpec
    annotation: AnnotationSpec
    judge_validation: JudgeValidationSpec  # the bias-scoring raters on labelled items

    @model_validator(mode="after")
    def files_readable(self) -> CobiaSpec:
        for name, rater in self.judges.items():
            if rater is not None and rater.llm is not None:
                rater.llm.check_files(f"probe.judges.{name}.llm")
        return self

    def asks_target(self) -> bool:
        return True

    def speaks(self) -> bool:
        """Whether the target hears the user (only FairDialogue's audio mode)."""
        return False


class ServerSpec(Spec):
    """``probe.audio.server``: the ``/v1/audio/speech`` endpoint of ``source: tts_server``."""

    base_url: Optional[str]
    model: str
    api_key_env: Optional[str]            # the variable holding the key; null: no key needed


class AudioSpec(Spec):
    """``probe.audio``: the source of the stimuli and its settings."""

    source: Literal["espeak", "tts_server", "dir"]
    voices: dict[str, Any]                # espeak: {part: settings}; tts_server: {part: voice}
    path: Optional[str]                   # dir: the folder holding manifest.csv
    # dir: read manifest paths that lead out of its folder (absolute, ../, symlinks out); off,
    # each is refused before it is read, since the clips are sent to the target
    allow_outside: bool
    server: ServerSpec
    cache: str                            # tts_server: the clip cache folder
    # the intelligibility audit's strata: ascending edges of the stimuli's Whisper WER
    wer_strata: Annotated[list[Positive], Field(min_length=1, description=(
        "a non-empty ascending list of WER edges, each a number > 0, e.g. [0.1, 0.3]"))]

    @model_validator(mode="after")
    def strata_ascend(self) -> AudioSpec:
        edges = list(self.wer_strata)
        if edges != sorted(set(edges)):
            raise ConfigError(f"probe.audio.wer_strata={edges}: the WER edges must ascend, "
                              "each once (e.g. [0.1, 0.3])")
        return self


class FairDialogueSpec(Spec):
    """What the FairDialogue kinds share: how the group is conveyed, the answer format."""

    family: Literal["fairdialogue"]
    tasks: Sequence[str]                  # each kind lists its own (a Literal per kind)
    attributes: dict[str, Annotated[list[str], Field(min_length=1)]]
    mode: Literal["text", "audio"]
    text_style: Literal["system", "self_intro"]
    neutral: bool
    instruction: Optional[str]
    suffix: str
    sampling: ProbeSampling
    answers: AnswersSpec
    audio: AudioSpec
    # conf/target option -> whether it answers in speech; read by the pin that sets
    # target.audio_out from it (experiment=fairdialogue_paper), not by the probe
    spoken_replies: dict[str, bool]

    def asks_target(self) -> bool:
        """False when the probe scores a CSV of answers and loads no target."""
        return not self.answers.path

    def speaks(self) -> bool:
        return self.mode == "audio"


class DecisionSpec(FairDialogueSpec):
    kind: Literal["decision"]
    tasks: DecisionTasks


class PragSpec(Spec):
    normalise: Literal["printed", "pairs"]


class FairLLMSpec(Spec):
    serp: Literal["langfair", "unit"]
    prag: Literal["langfair", "pairs"]


class RecommendationSpec(FairDialogueSpec):
    kind: Literal["recommendation"]
    tasks: RecommendationTasks
    k: PositiveInt
    prag: PragSpec
    fairllm: FairLLMSpec


class FeedbackItems(Spec):
    items_from: Optional[list[str]]       # decision run directories, or this target's answers


class FeedbackSpec(FairDialogueSpec):
    kind: Literal["feedback"]
    tasks: DecisionTasks
    rounds: PositiveInt
    pushbacks: Optional[Annotated[list[str], Field(min_length=1)]]
    feedback: FeedbackItems


FairDialogueKinds = Annotated[Union[DecisionSpec, RecommendationSpec, FeedbackSpec],
                              Field(discriminator="kind")]
ProbeSpec = Annotated[Union[CobiaSpec, FairDialogueKinds, FairMTSpec],
                      Field(discriminator="family")]


class TargetSpec(Spec):
    """The model under test: its ``llm`` block, and for CoBia's released DAN its maker's
    names (``company``, ``model_company``)."""

    name: str
    company: Optional[str]               # null: the released DAN is skipped
    model_company: Optional[str]
    llm: LLMSpec
    # a speech preset's switch for spoken replies (target.audio_out=true); its llm.audio_out
    # follows it (${..audio_out}), and the llm block is what the backend reads
    audio_out: Optional[bool] = None
