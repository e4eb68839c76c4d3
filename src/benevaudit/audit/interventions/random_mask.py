"""``random_mask``: the control for cue masking.

Why: masking any words hurts a classifier somewhat; the control says how much of M's effect
comes from hiding *cue* words rather than from hiding words at all. In each agent turn it
masks as many words as M would mask there, drawn uniformly from the turn's non-cue words.
Eligible words are real words (not lone punctuation marks, not already ``[unused0]``) outside
the cue union. When a turn has fewer eligible words than M masks there, all of them are masked
and the shortfall is counted (``intervention/random_mask_shortfall``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions import segments as seg
from benevaudit.audit.interventions.base import Edit, LexiconIntervention, cue_index, cue_vocab
from benevaudit.audit.interventions.seeding import counter, dialogue_keys, random_bits
from benevaudit.audit.interventions.turns import scatter_texts, view_turns, with_texts
from benevaudit.text import MASK_TOKEN


@dataclasses.dataclass(frozen=True)
class RandomMask(LexiconIntervention):
    name: ClassVar[str] = "random_mask"

    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        view = view_turns(batch)
        rows = np.flatnonzero(view.is_agent)
        segments = seg.segment(pc.take(view.text, pa.array(rows)))
        at, turn = segments.word_index(), segments.word_text()           # [W] [W]
        words = pc.take(segments.values, pa.array(at))
        is_cue = cue_index(words, cue_vocab(self.cues, self.k)) >= 0
        quota = np.bincount(turn[is_cue], minlength=len(rows))           # [A] what M masks
        eligible = (~is_cue & pc.match_substring_regex(words, seg.ALNUM_START)
                    .to_numpy(zero_copy_only=False)
                    & pc.not_equal(words, MASK_TOKEN).to_numpy(zero_copy_only=False))
        cand = np.flatnonzero(eligible)
        keys = dialogue_keys(batch.column("id").to_pylist(), seed)[view.dialogue[rows]]  # [A]
        first = np.cumsum(segments.n_words) - segments.n_words                 # [A] first word
        t = turn[cand]
        draw = random_bits(keys[t], counter(view.position[rows][t], cand - first[t]))
        order = np.argsort((t.astype(np.uint64) << np.uint64(40)) | (draw >> np.uint64(24)),
                           kind="stable")                                    # by turn, then draw
        per_turn = np.bincount(t, minlength=len(rows))                       # [A] eligible words
        sorted_turn = t[order]
        rank = np.arange(len(order)) - (np.cumsum(per_turn) - per_turn)[sorted_turn]
        chosen = cand[order][rank < quota[sorted_turn]]
        edited = seg.replace_words(segments, at[chosen], MASK_TOKEN)
        shortfall = int(np.maximum(quota - per_turn, 0).sum())
        return Edit(with_texts(batch, view, scatter_texts(view, rows, edited)),
                    Counter(masked_words=len(chosen), agent_words=len(at),
                            random_mask_shortfall=shortfall))
