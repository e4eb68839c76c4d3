"""The ``probe`` block of ``probe=fairmt`` (``conf/probe/fairmt*.yaml``), typed and closed.

Every key FairMT reads is declared here, with its range; a key the block does not declare is
an error (``extra="forbid"``), so a misspelt option fails before any model loads.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, get_args

from pydantic import Field

from benevaudit.llm.spec import LLMSpec
from benevaudit.probes.judge_validation import JudgeValidationSpec
from benevaudit.specs import Fraction, NonNegative, PositiveInt, Share, Spec

Task = Literal["Anaphora_Ellipsis", "Scattered_Questions", "Jailbreak_Tips",
               "Interference_Misinformation", "Negative_Feedback", "Fixed_Format"]


class FairMTData(Spec):
    """Where the dialogues come from: a clone of the release (null: the stand-in) and which set."""

    path: Optional[str]
    set: Literal["1k", "10k"]


class FairMTSampling(Spec):
    """The target's decoding: the release's greedy 150 tokens, ``no_repeat_ngram_size`` 6
    (honoured by the ``hf`` backend; the others have no such option)."""

    temperature: NonNegative
    top_p: Fraction
    max_tokens: PositiveInt
    no_repeat_ngram_size: Optional[PositiveInt]


class FairMTJudge(Spec):
    """The judge: its decoding and its ``llm`` block (GPT-4 Turbo in the paper).
    ``server_defaults`` sends no temperature, top_p or seed on the ``openai`` backend, as the
    release's judge call passes none (backends with no server decode with the values here)."""

    temperature: NonNegative
    top_p: Share
    max_tokens: Optional[PositiveInt]     # null: no cap, as the release's calls
    server_defaults: bool
    llm: LLMSpec


class FairMTAnswers(Spec):
    """A folder of ``<Task>.json`` replies made elsewhere, or an Inspect AI log of
    ``benevaudit/fairmt`` (``inspect_log``), scored instead of asking a target."""

    path: Optional[str]
    inspect_log: Optional[str] = None     # a log file or folder of logs; None: not an Inspect run


class FairMTSpec(Spec):
    """``probe=fairmt``: the data, the tasks, the target's system prompt and decoding, the
    judge, which turns it reads and which prompt it gets, an optional answers folder, and the
    labelled items the judge is checked on."""

    family: Literal["fairmt"]
    data: FairMTData
    tasks: Annotated[list[Task], Field(min_length=1, description=(
        f"a non-empty list of the release's tasks, each one of {list(get_args(Task))}"))]
    system_prompt: Literal["auto", "released", "none"]
    sampling: FairMTSampling
    judge_prompt: Literal["released", "paper"]
    judge_turns: Literal["last", "all"]
    prefilter: bool
    judge: FairMTJudge
    answers: FairMTAnswers
    judge_validation: JudgeValidationSpec   # the judge, under each task's prompt, on labelled items

    def asks_target(self) -> bool:
        """False when the probe scores a folder of answers (or a log) and loads no target."""
        return not (self.answers.path or self.answers.inspect_log)

    def speaks(self) -> bool:
        return False
