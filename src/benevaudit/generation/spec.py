"""The ``data`` block: which corpus a run reads (a generated file, or the scripted sample)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.generation.producers import check_planted_cues
from benevaudit.specs import Fraction, NonNegativeInt, Spec

CORPUS = "a .jsonl, .jsonl.gz or .parquet corpus, or a directory of shards"


class DataSpec(Spec):
    """``data=embedded`` (the scripted sample, sized here) or ``data=corpus`` (``data.path``)."""

    kind: str
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
