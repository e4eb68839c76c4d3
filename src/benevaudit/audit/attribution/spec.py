"""The ``attribution`` block: which methods explain the classifier, over what, and how much."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union, get_args

from pydantic import Field

from benevaudit.audit.attribution.words import Method
from benevaudit.specs import NonNegativeInt, PositiveInt, Spec

# the class explained for each dialogue: its label, the model's prediction, or one class
Target = Literal["true", "predicted", "N", "OB", "BB"]
SplitName = Literal["train", "validation", "test"]
METHOD_LIST = (f"a non-empty list of {', '.join(get_args(Method))} (the first writes "
               "cue_lexicon.json)")
TOKEN_CAP = "a positive integer, auto (1,024 on CPU, no cap on GPU) or null (no cap)"


class AttributionSpec(Spec):
    """Every choice is typed, so a bad method, target or split fails before any training."""

    enabled: bool
    methods: Annotated[list[Method], Field(min_length=1, description=METHOD_LIST)]
    split: SplitName
    target: Target
    top_k: PositiveInt
    min_count: PositiveInt
    words_only: bool
    batch_size: PositiveInt
    max_batch_tokens: Annotated[Union[PositiveInt, Literal["auto"], None],
                                Field(description=TOKEN_CAP)]
    n_steps: PositiveInt
    logodds: bool
    representation_shift: bool
    cache_dir: Optional[str]
    faithfulness_dialogues: Optional[NonNegativeInt]       # null: the whole split
    heatmap_dialogues: NonNegativeInt
    heatmap_png_dialogues: NonNegativeInt
    shift_max_train: Optional[PositiveInt]                 # null: every training dialogue
