"""The ``data`` block (which corpus a run reads: a generated file, or the scripted sample), the
``generator`` block (what writes a corpus) and generate.py's ``out_dir`` to resume."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, field_validator, model_validator

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_json
from benevaudit.generation.scripted import PlantedCue
from benevaudit.gold.spec import DiaSafetyDataSpec, EdosDataSpec, LabelledDataSpec
from benevaudit.generation.sink import MANIFEST
from benevaudit.llm.spec import LLMSpec, SamplingSpec
from benevaudit.specs import Fraction, NonNegative, NonNegativeInt, PositiveInt, Spec

CORPUS = "a .jsonl, .jsonl.gz or .parquet corpus, or a directory of shards"
EXCHANGES = "null or a list of positive integers (user-agent exchanges per dialogue)"
RESUMED = "the manifest.json generate.py wrote in out_dir"


def check_planted_cues(cues: Any, key: str) -> Any:
    """``[{token, label, rate}, ...]``: each cue is built, so its own checks run with the key
    named (``data.planted_cues[0]: PlantedCue.rate must be in [0, 1], got 7``)."""
    for i, cue in enumerate(cues or []):
        if not isinstance(cue, dict) or set(cue) != {"token", "label", "rate"}:
            raise ConfigError(f"{key}[{i}]={cue!r}: expected "
                              "{token: <word>, label: N|OB|BB, rate: <0..1>}")
        try:
            PlantedCue(**cue)
        except ConfigError as e:
            raise ConfigError(f"{key}[{i}]: {e}") from None
    return cues


class PlantedCueSpec(Spec):
    """``{token, label, rate}``: a token planted into agent turns of one class, a positive
    control for attribution."""

    token: str                     # one word or mark
    label: Literal["N", "OB", "BB"]
    rate: Fraction                 # the chance per agent turn of that class

    def cue(self) -> PlantedCue:
        return PlantedCue(self.token, self.label, self.rate)


class EmbeddedDataSpec(Spec):
    """``data=embedded``: the scripted sample, sized here, written once under the cache."""

    kind: Literal["embedded"]
    size: Annotated[int, Field(ge=3)]  # dialogues, rounded to whole triplets
    seed: NonNegativeInt
    signal: Fraction
    planted_cues: list[PlantedCueSpec]
    path: Optional[str]            # not read: a recipe passing every study a corpus is not refused

    @field_validator("planted_cues", mode="before")
    @classmethod
    def cues_built(cls, cues: Any) -> Any:
        return check_planted_cues(cues, "data.planted_cues")


class CorpusDataSpec(Spec):
    """``data=corpus``: a corpus on disk (``data.path``), read now."""

    kind: Literal["corpus"]
    path: str

    @model_validator(mode="after")
    def readable(self) -> CorpusDataSpec:
        if self.path in ("", "???"):
            raise ConfigError(f"data.path is required with data=corpus: data.path=<{CORPUS}>")
        if not Path(self.path).expanduser().exists():
            raise ConfigError(f"data.path={self.path}: no such file or directory (expected "
                              f"{CORPUS})")
        return self


DataSpec = Annotated[Union[EmbeddedDataSpec, CorpusDataSpec, EdosDataSpec, DiaSafetyDataSpec,
                           LabelledDataSpec], Field(discriminator="kind")]
AnyData = Union[EmbeddedDataSpec, CorpusDataSpec, EdosDataSpec, DiaSafetyDataSpec,
                LabelledDataSpec]


class DataBlock(Spec):
    """A ``data`` block alone (outside an entrypoint's run spec): benchmarks and tests."""

    data: DataSpec

    @classmethod
    def read(cls, block: Any) -> AnyData:
        return cls.of({"data": block}).data


class ScriptedGeneratorSpec(Spec):
    """``generator=scripted``: the phrase banks, their ``signal`` and ``planted_cues``."""

    name: str
    kind: Literal["scripted"]
    signal: Fraction
    planted_cues: list[PlantedCueSpec]

    @field_validator("planted_cues", mode="before")
    @classmethod
    def cues_built(cls, cues: Any) -> Any:
        return check_planted_cues(cues, "generator.planted_cues")


class LLMGeneratorSpec(Spec):
    """An LLM generator: ``mode``, ``exchanges``, ``sampling`` and its ``llm`` block, checked
    before loading."""

    name: str
    kind: Literal["llm"]
    mode: Literal["whole", "self_chat"]
    exchanges: Annotated[Optional[list[PositiveInt]],
                         Field(min_length=1, description=EXCHANGES)]
    system_in_user: bool
    sampling: SamplingSpec         # each attempt's seed derives from its seed
    llm: LLMSpec

    @model_validator(mode="after")
    def loadable(self) -> LLMGeneratorSpec:
        """A batch size, where the backend takes one, is never null (absent: the backend's
        own); then the model it names, before loading."""
        if "batch_size" in self.llm.model_fields_set and getattr(self.llm, "batch_size") is None:
            raise ConfigError("generator.llm.batch_size=None: expected a positive integer")
        self.llm.check_loadable("generator.llm")
        return self


GeneratorSpec = Annotated[Union[ScriptedGeneratorSpec, LLMGeneratorSpec],
                          Field(discriminator="kind")]


def check_resumable(out_dir: str) -> None:
    """A generation resumed in ``out_dir`` finds a manifest it can read."""
    manifest = Path(out_dir) / MANIFEST
    if manifest.is_file() and not isinstance(read_json(manifest, expected=RESUMED), dict):
        raise InputError(f"{manifest}: expected a JSON object ({RESUMED})")
