"""detect.py's blocks that its figures read, typed as in :mod:`benevaudit.specs`: the bootstrap
stability of the trigger rates (``bootstrap``, Figure 5) and the flips between two judge runs
(``flips``, Figure 4)."""

from __future__ import annotations

from typing import Annotated, Optional

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
