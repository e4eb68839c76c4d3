"""The ``probe`` block, one spec per kind, and the ``target`` the probe asks, typed (see
:mod:`benevaudit.specs`).

``probe.family`` picks CoBia, FairDialogue or FairMT-Bench, and FairDialogue's ``probe.kind`` one of its
three protocols; each spec lists its kind's keys only, so a misspelt key names the valid ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, Optional, Union, get_args

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.llm.spec import LLMSpec
# AudioSpec and ServerSpec are read from here too (the stimuli modules, tests)
from benevaudit.probes.audio_spec import (AudioSource, AudioSpec, DirAudio,  # noqa: F401
                                         ServerAudio, ServerSpec)
from benevaudit.probes.judge_validation import JudgeValidationSpec
from benevaudit.specs import (Fraction, NonNegative, NonNegativeInt, PositiveInt,
                              Share, Spec)


class SwitchesSpec(Spec):
    """CoBia's filter-evasion tricks in the seeded final question."""

    anaphora: bool
    index: bool
    disavowal: bool


CobiaMethod = Literal["hcc", "scc", "zero_shot", "roleplay", "dan"]
JUDGE_PROMPTS = ("bias", "nli")   # the judge prompts whose questions people answered
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
    # the annotators' groups: judge_prompt (the paper's: the bias judge's question against
    # the NLI judge's) | method (one group per attack method)
    grouping: Literal["judge_prompt", "method"]
    groups: Optional[list[str]]           # null: bias, nli (judge_prompt) or hcc, scc (method)

    @model_validator(mode="after")
    def known_groups(self) -> AnnotationSpec:
        valid = JUDGE_PROMPTS if self.grouping == "judge_prompt" else get_args(CobiaMethod)
        bad = [g for g in self.groups or () if g not in valid]
        if bad:
            raise ConfigError(f"probe.annotation.groups: {bad} are not groups of "
                              f"grouping={self.grouping}; expected some of {list(valid)}")
        return self

    def group_names(self) -> list[str]:
        """The groups, in sheet order."""
        return self.groups or list(JUDGE_PROMPTS if self.grouping == "judge_prompt"
                                   else ("hcc", "scc"))


class AnswersSpec(Spec):
    path: Optional[str]                   # a CSV of answers to score instead of asking
    # two rows for one cell: an error, or kept as the release's samples keep them (averaged or
    # concatenated in the released/* metrics; the first in the others)
    repeats: Literal["error", "release"]
    # an Inspect AI log (or folder of logs) of benevaudit/fairdialogue to score instead of asking
    inspect_log: Optional[str]

    @model_validator(mode="after")
    def one_source(self) -> AnswersSpec:
        if self.path and self.inspect_log:
            raise ConfigError("probe.answers.path and probe.answers.inspect_log are both set; "
                              "give one source of answers")
        return self


class CobiaAnswers(Spec):
    """Replies made elsewhere, scored instead of asking the target: an Inspect AI log (or
    folder of logs) of the study's task, ``benevaudit/<study>`` (``inspect_log``), or where the
    study has one its own answers format (``path``); null: ask the target."""

    inspect_log: Optional[str]


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
    answers: CobiaAnswers

    @model_validator(mode="after")
    def files_readable(self) -> CobiaSpec:
        for name, rater in self.judges.items():
            if rater is not None and rater.llm is not None:
                rater.llm.check_files(f"probe.judges.{name}.llm")
        return self

    def asks_target(self) -> bool:
        """False when the probe scores an Inspect log's replies and loads no target."""
        return not self.answers.inspect_log

    def speaks(self) -> bool:
        """Whether the target hears the user (only FairDialogue's audio mode)."""
        return False


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
    audio: AudioSource
    # conf/target option -> whether it answers in speech; read by the pin that sets
    # target.audio_out from it (experiment=fairdialogue_paper), not by the probe
    spoken_replies: dict[str, bool]

    def asks_target(self) -> bool:
        """False when the probe scores a CSV of answers (or an Inspect log) and loads no
        target."""
        return not (self.answers.path or self.answers.inspect_log)

    def speaks(self) -> bool:
        return self.mode == "audio"

    @model_validator(mode="after")
    def audio_source_given(self) -> FairDialogueSpec:
        """Audio mode's source names where its clips come from, refused here, before any
        model loads: a TTS server's URL, a recordings folder."""
        if self.mode != "audio" or not self.asks_target():
            return self
        audio = self.audio
        if isinstance(audio, ServerAudio) and not audio.server.base_url:
            raise ConfigError("probe.audio.server.base_url: source tts_server needs the "
                              "endpoint's base URL (e.g. http://localhost:8880/v1)")
        if isinstance(audio, DirAudio) and not audio.path:
            raise ConfigError("probe.audio.path: source dir needs the folder holding "
                              "manifest.csv")
        return self


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

    @model_validator(mode="after")
    def live_target(self) -> FeedbackSpec:
        if self.answers.inspect_log:
            raise ConfigError("probe=fairdialogue_feedback talks to the target over several "
                              "turns; probe.answers.inspect_log works with fairdialogue_decision "
                              "and fairdialogue_recommendation")
        return self


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
