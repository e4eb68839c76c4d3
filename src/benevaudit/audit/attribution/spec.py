"""The ``attribution`` block: which methods explain the classifier, over what, and how much."""

from __future__ import annotations

from typing import Optional

from pydantic import model_validator

from benevaudit.audit.attribution.suite import check_attribution
from benevaudit.specs import NonNegativeInt, PositiveInt, Spec


class AttributionSpec(Spec):
    """The numbers are typed here; methods, target, split and batch caps are checked by the
    suite that runs them (:func:`check_attribution`), here and again when it runs."""

    enabled: bool
    faithfulness_dialogues: Optional[NonNegativeInt]       # null: the whole split
    heatmap_dialogues: NonNegativeInt
    heatmap_png_dialogues: NonNegativeInt
    shift_max_train: Optional[PositiveInt]                 # null: every training dialogue

    @model_validator(mode="after")
    def runnable(self) -> AttributionSpec:
        check_attribution({**self.model_dump(), "enabled": True})
        return self
