"""The attribution of one dialogue: the record that attribution passes produce, the store keeps
on disk and the report draws.

It has its own module so that the passes (:mod:`.words`) and the store (:mod:`.store`) both
import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benevaudit.text import Span


@dataclass
class DialogueAttribution:
    """Kept agent words of one dialogue with their relevance, and the model's view of it."""

    id: str
    label: int | None
    target: int                  # class index whose logit was explained
    probs: np.ndarray            # [C] class probabilities of the unmodified input
    input_ids: list[int]         # as fed to the model: [CLS] … [SEP], unpadded
    words: list[str]             # kept agent words, as written
    spans: list[Span]
    relevance: np.ndarray        # [n_words], normalised (see :mod:`.words`)
    pieces: list[list[int]]      # per word, its token positions in input_ids

    @property
    def pred(self) -> int:
        return int(self.probs.argmax())
