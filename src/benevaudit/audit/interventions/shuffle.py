"""``shuffle`` (SH): whitespace tokens permuted within each turn, both speakers.

Why: a bag-of-words classifier is indifferent to order; a classifier that reads treatment
from syntax is not. Each turn keeps its multiset of tokens (split on whitespace, rejoined with
single spaces) and every turn keeps its place and speaker; only the order inside a turn
changes. Arrow's Unicode whitespace split agrees with Python's ``str.split``. The
permutation sorts each turn's tokens by a seeded draw per token.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions.base import Edit, Intervention
from benevaudit.audit.interventions.seeding import dialogue_keys, token_bits, turn_stream
from benevaudit.audit.interventions.turns import view_turns, with_texts


@dataclasses.dataclass(frozen=True)
class Shuffle(Intervention):
    name: ClassVar[str] = "shuffle"

    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        view = view_turns(batch)
        tokens = _split(view.text)                                        # list<string> [T]
        offsets = tokens.offsets.to_numpy().astype(np.int64)
        offsets -= offsets[0]
        n = np.diff(offsets)                                              # [T] tokens per turn
        turn = np.repeat(np.arange(len(n), dtype=np.int64), n)            # [K]
        local = np.arange(len(turn), dtype=np.int64) - offsets[:-1][turn]
        keys = dialogue_keys(batch.column("id").to_pylist(), seed)[view.dialogue]  # [T]
        draw = token_bits(turn_stream(keys, view.position)[turn], local) >> np.uint64(24)
        order = np.argsort((turn.astype(np.uint64) << np.uint64(40)) | draw,      # turn, then draw
                           kind="stable")
        flat = tokens.flatten()
        shuffled = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                            pc.take(flat, pa.array(order)))
        text = pc.binary_join(shuffled, " ")
        return Edit(with_texts(batch, view, text), Counter(shuffled_turns=int((n > 1).sum())))


def _split(texts: pa.StringArray) -> pa.ListArray:
    """Whitespace tokens as Python's ``str.split`` finds them; the ASCII kernels are faster and
    agree with it unless a text holds the separators \\x1c-\\x1f, which only Python counts."""
    data = np.frombuffer(texts.buffers()[2], np.uint8) if len(texts) and texts.buffers()[2] \
        else np.zeros(0, np.uint8)
    if not len(data) or (data.max() < 0x80 and not ((data >= 0x1C) & (data <= 0x1F)).any()):
        return pc.ascii_split_whitespace(pc.ascii_trim_whitespace(texts))
    return pc.utf8_split_whitespace(pc.utf8_trim_whitespace(texts))
