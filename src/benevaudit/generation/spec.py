"""The ``data`` block (which corpus a run reads: a generated file, or the scripted sample), the
``generator`` block (what writes a corpus) and generate.py's ``out_dir`` to resume."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_json
from benevaudit.generation.producers import check_planted_cues
from benevaudit.generation.writer import MANIFEST
from benevaudit.llm.spec import LLMSpec, SamplingSpec
from benevaudit.specs import Fraction, NonNegativeInt, PositiveInt, Spec

CORPUS = "a .jsonl, .jsonl.gz or .parquet corpus, or a directory of shards"
EXCHANGES = "null or a list of positive integers (user-agent exchanges per dialogue)"
RESUMED = "the manifest.json generate.py wrote in out_dir"


class DataSpec(Spec):
    """``data=embedded`` (the scripted sample, sized here) or ``data=corpus`` (``data.path``)."""

    kind: Literal["embedded", "corpus"]
    path: Optional[str] = None
    # keys only data=embedded has: absent elsewhere, never null
    size: Annotated[int, Field(ge=3)] = None    # type: ignore[assignment]  # whole triplets
    seed: NonNegativeInt = None                 # type: ignore[assignment]
    signal: Fraction = None                     # type: ignore[assignment]
    planted_cues: Optional[list[Any]] = None

    @model_validator(mode="after")
    def readable(self) -> DataSpec:
        check_planted_cues(self.planted_cues, "data.planted_cues")
        if self.kind != "corpus":
            return self
        if self.path in (None, "", "???"):
            raise ConfigError(f"data.path is required with data=corpus: data.path=<{CORPUS}>")
        if not Path(self.path).expanduser().exists():
            raise ConfigError(f"data.path={self.path}: no such file or directory (expected "
                              f"{CORPUS})")
        return self


class GeneratorLLM(LLMSpec):
    """A generator's llm block: a batch size, where its backend takes one, is never null."""

    batch_size: PositiveInt = None              # type: ignore[assignment]


class ScriptedGeneratorSpec(Spec):
    """``generator=scripted``: the phrase banks, their ``signal`` and ``planted_cues``."""

    name: str
    kind: Literal["scripted"]
    signal: Fraction
    planted_cues: Optional[list[Any]]

    @model_validator(mode="after")
    def cues(self) -> ScriptedGeneratorSpec:
        check_planted_cues(self.planted_cues, "generator.planted_cues")
        return self


class LLMGeneratorSpec(Spec):
    """An LLM generator: ``mode``, ``exchanges``, ``sampling`` and its ``llm`` block, checked
    before loading."""

    name: str
    kind: Literal["llm"]
    mode: Literal["whole", "self_chat"]
    exchanges: Annotated[Optional[list[PositiveInt]],
                         Field(min_length=1, description=EXCHANGES)]
    system_in_user: bool
    sampling: SamplingSpec
    llm: GeneratorLLM

    @model_validator(mode="after")
    def loadable(self) -> LLMGeneratorSpec:
        self.llm.check_loadable("generator.llm")
        return self


GeneratorSpec = Annotated[Union[ScriptedGeneratorSpec, LLMGeneratorSpec],
                          Field(discriminator="kind")]


def check_resumable(out_dir: str) -> None:
    """A generation resumed in ``out_dir`` finds a manifest it can read."""
    manifest = Path(out_dir) / MANIFEST
    if manifest.is_file() and not isinstance(read_json(manifest, expected=RESUMED), dict):
        raise InputError(f"{manifest}: expected a JSON object ({RESUMED})")
