"""The ``attribution`` block: which methods explain the classifier, over what, and how much."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, model_validator

from benevaudit.audit.attribution.suite import check_attribution
from benevaudit.specs import NonNegativeInt, PositiveInt, Spec


class AttributionSpec(Spec):
    """The numbers are typed here; methods, target, split and batch caps are checked by the
    suite that runs them (:func:`check_attribution`), here and again when it runs."""

    enabled: bool
    methods: Annotated[list[str], Field(min_length=1)]   # the first writes cue_lexicon.json
    split: str
    target: str
    top_k: PositiveInt
    min_count: PositiveInt
    words_only: bool
    batch_size: PositiveInt
    max_batch_tokens: Union[PositiveInt, Literal["auto"], None]
    n_steps: PositiveInt
    logodds: bool
    representation_shift: bool
    cache_dir: Optional[str]
    faithfulness_dialogues: Optional[NonNegativeInt]       # null: the whole split
    heatmap_dialogues: NonNegativeInt
    heatmap_png_dialogues: NonNegativeInt
    shift_max_train: Optional[PositiveInt]                 # null: every training dialogue

    @model_validator(mode="after")
    def runnable(self) -> AttributionSpec:
        check_attribution({**self.model_dump(), "enabled": True})
        return self
