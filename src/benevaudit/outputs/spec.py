"""detect.py's blocks that its figures read, typed as in :mod:`benevaudit.specs`: the bootstrap
stability of the trigger rates (``bootstrap``, Figure 5) and the flips between two judge runs
(``flips``, Figure 4), and the experiment ``logger`` every run mirrors its metrics to."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.specs import PositiveInt, Share, Spec

FRACTIONS = ("a non-empty list of numbers in (0, 1], shares of the corpus, e.g. "
             "[0.005, 0.05, 0.2]")


class StabilitySpec(Spec):
    """detect.py's ``bootstrap``: trigger rates over resampled evaluation sets (Figure 5)."""

    enabled: bool
    fractions: Annotated[list[Share], Field(min_length=1, description=FRACTIONS)]
    n_resamples: PositiveInt
    pool_fraction: Share


class FlipsSpec(Spec):
    """detect.py's ``flips`` (Figure 4): a judge run with demographics and one without."""

    with_: Optional[str] = Field(alias="with")
    without: Optional[str]

    @model_validator(mode="after")
    def both(self) -> FlipsSpec:
        if bool(self.with_) != bool(self.without):
            raise ConfigError("flips needs both flips.with=<judge run with demographics> and "
                              "flips.without=<the same judge without>")
        return self

    @property
    def wanted(self) -> bool:
        return bool(self.with_ or self.without)


class WandbLoggerSpec(Spec):
    """``logger=wandb``: Weights & Biases, offline under the run directory by default."""

    kind: Literal["wandb"]
    project: str
    entity: Optional[str]
    mode: Literal["offline", "online", "disabled"]
    tags: list[str]


class CsvLoggerSpec(Spec):
    """``logger=csv``: Lightning's ``metrics.csv`` under the run directory."""

    kind: Literal["csv"]


class NoLoggerSpec(Spec):
    kind: Literal["none"]


LoggerSpec = Annotated[Union[WandbLoggerSpec, CsvLoggerSpec, NoLoggerSpec],
                       Field(discriminator="kind")]


class LoggerBlock(Spec):
    """The ``logger`` block alone: read where the logger is built, not in a run spec."""

    logger: LoggerSpec

    @classmethod
    def read(cls, block: Any) -> WandbLoggerSpec | CsvLoggerSpec | NoLoggerSpec:
        """The block's spec; a run without a logger group has none."""
        return cls.of({"logger": block or {"kind": "none"}}).logger
