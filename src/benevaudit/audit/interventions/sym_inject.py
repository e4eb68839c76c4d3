"""``sym_inject`` (S): each class receives the other classes' cue words.

Why: the complement of frequency normalisation. Instead of equalising each cue's frequency,
every class is seeded with the cues of the two other classes, so a cue word appears in every
class. An agent turn of class c with L words (:data:`benevaudit.text.WORD_RE` words, after
punctuation folding; punctuation marks are not words and do not count in L) receives n = min(round(rate·L), max_per_turn) words (rate 0.05, at most
10; rounding half up), each drawn uniformly from the union of the two other classes' top-k
lexicons, at positions drawn from that word's position profile (:mod:`.positions`).

The study folds punctuation first (P→S); the config ``sym_inject`` includes ``punct`` before
it. Dialogues without a class are untouched.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import ClassVar, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions import positions, segments as seg
from benevaudit.audit.interventions.agent_turns import (
    AgentTurns, agent_turns, insert_cues, position_counts, turn_keys,
)
from benevaudit.audit.interventions.base import Edit, LexiconIntervention, cue_vocab
from benevaudit.audit.interventions.seeding import counter, uniform
from benevaudit.errors import ConfigError
from benevaudit.schema import CLASSES


class InjectState(NamedTuple):
    vocab: list[str]
    pools: list[np.ndarray]   # per class: vocab indices of the other classes' words
    cdf: np.ndarray           # [V, 4] cumulative position profile


def word_counts(turns: AgentTurns) -> np.ndarray:
    """[A] L of every turn: its words, punctuation marks not counted."""
    words = seg.words(turns.segments)                                         # [W]
    is_word = pc.match_substring_regex(words, seg.ALNUM_START).to_numpy(zero_copy_only=False)
    turn = np.repeat(np.arange(len(turns.lay.n)), turns.lay.n)                # [W]
    return np.bincount(turn[is_word], minlength=len(turns.lay.n))


@dataclasses.dataclass(frozen=True, kw_only=True)
class SymInject(LexiconIntervention):
    rate: float                    # conf/intervention/sym_inject.yaml
    max_per_turn: int
    name: ClassVar[str] = "sym_inject"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (0 <= self.rate <= 1 and isinstance(self.max_per_turn, int)
                and self.max_per_turn >= 0):
            raise ConfigError(f"sym_inject: need 0 <= rate <= 1 and max_per_turn >= 0, got "
                              f"rate={self.rate!r}, max_per_turn={self.max_per_turn!r}")

    def count(self, n_words: np.ndarray) -> np.ndarray:
        """[A] words to insert into turns of ``n_words`` words (exact half-up rounding)."""
        r = Fraction(str(self.rate))
        n = (2 * n_words * r.numerator + r.denominator) // (2 * r.denominator)
        return np.minimum(n, self.max_per_turn)

    def measure(self, batch: pa.RecordBatch) -> tuple[np.ndarray, ...]:
        vocab = cue_vocab(self.cues, self.k)
        return (position_counts(agent_turns(batch, vocab), len(vocab)),)

    def finish(self, totals: tuple[np.ndarray, ...]) -> InjectState:
        vocab = cue_vocab(self.cues, self.k)
        index = {w: i for i, w in enumerate(vocab)}
        pools = [np.array([index[w] for w in cue_vocab(self.cues, self.k,
                                                         [o for o in CLASSES if o != c])],
                          dtype=np.int64) for c in CLASSES]
        return InjectState(vocab, pools, positions.profile(totals[0]))

    def apply(self, batch: pa.RecordBatch, seed: int, state: InjectState) -> Edit:
        turns = agent_turns(batch, state.vocab)
        keys, pos = turn_keys(batch, turns, seed)                                 # [A] [A]
        pool_size = np.array([len(p) for p in state.pools])[turns.cls]            # [A]
        n = np.where(pool_size > 0, self.count(word_counts(turns)), 0)            # [A]
        turn = np.repeat(np.arange(len(n)), n)                                    # [M]
        ordinal = np.arange(len(turn)) - np.repeat(np.cumsum(n) - n, n)
        u_word = uniform(keys[turn], counter(pos[turn], 0, ordinal, stream=0))
        pick = np.minimum((u_word * pool_size[turn]).astype(np.int64), pool_size[turn] - 1)
        word = np.zeros(len(turn), dtype=np.int64)
        for c, pool in enumerate(state.pools):
            sel = turns.cls[turn] == c
            if len(pool):
                word[sel] = pool[pick[sel]]
        return insert_cues(batch, turns, seed, state.vocab, state.cdf, turn, word,
                           np.zeros_like(turn), ordinal)
