"""``freq_norm`` (F): every cue made equally frequent in every class, by insertion.

Why: a cue word the classifier relies on is informative because its frequency differs by
class. With f_c(w) the per-agent-turn frequency of cue w in class c (occurrences of the whole
word, case-insensitive, per agent turn of class c, measured on the table being edited), each
class c below the maximum receives w in each of its agent turns at the expected rate
max_c' f_c'(w) − f_c(w): ⌊rate⌋ copies plus one more with probability rate − ⌊rate⌋.
Copies go to positions drawn from w's position profile (:mod:`.positions`). Afterwards f_c(w)
is equal across classes up to sampling noise, so w no longer tells the classes apart.

The study folds punctuation first (P→F); the config ``freq_norm`` includes ``punct`` before
it. Inserted words are the lexicon's lowercase forms. Dialogues without a class are untouched.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import numpy as np
import pyarrow as pa

from benevaudit.audit.interventions import positions
from benevaudit.audit.interventions.agent_turns import (
    agent_turns, insert_cues, position_counts, turn_keys,
)
from benevaudit.audit.interventions.base import Edit, LexiconIntervention, cue_vocab
from benevaudit.audit.interventions.seeding import counter, uniform
from benevaudit.schema import CLASSES


class FreqState(NamedTuple):
    vocab: list[str]
    freq: np.ndarray      # [C, V] per-agent-turn frequency of each cue in each class
    rate: np.ndarray      # [C, V] insertions per agent turn: max over classes minus own
    cdf: np.ndarray       # [V, 4] cumulative position profile


@dataclasses.dataclass(frozen=True)
class FreqNorm(LexiconIntervention):
    name: ClassVar[str] = "freq_norm"

    def measure(self, batch: pa.RecordBatch) -> tuple[np.ndarray, ...]:
        return measure(batch, cue_vocab(self.cues, self.k))

    def finish(self, totals: tuple[np.ndarray, ...]) -> FreqState:
        return finish(cue_vocab(self.cues, self.k), *totals)

    def apply(self, batch: pa.RecordBatch, seed: int, state: FreqState) -> Edit:
        turns = agent_turns(batch, state.vocab)
        keys, pos = turn_keys(batch, turns, seed)                                 # [A] [A]
        rate = state.rate[turns.cls]                                              # [A, V]
        v_index = np.arange(len(state.vocab))
        u = uniform(keys[:, None], counter(pos[:, None], v_index[None, :]))       # [A, V]
        copies = np.floor(rate).astype(np.int64) + (u < rate - np.floor(rate))    # [A, V]
        turn, word = np.nonzero(copies)
        reps = copies[turn, word]
        turn, word = np.repeat(turn, reps), np.repeat(word, reps)                 # [M]
        ordinal = np.arange(len(turn)) - np.repeat(np.cumsum(reps) - reps, reps)
        return insert_cues(batch, turns, seed, state.vocab, state.cdf, turn, word, word, ordinal)


def measure(batch: pa.RecordBatch, vocab: list[str]) -> tuple[np.ndarray, ...]:
    """Cue occurrences per class [C, V], agent turns per class [C], cue positions [V, 4]."""
    turns = agent_turns(batch, vocab)
    word_turn = turns.segments.word_text()
    hit = turns.cue >= 0
    flat = turns.cls[word_turn[hit]] * len(vocab) + turns.cue[hit]
    occurrences = np.bincount(flat, minlength=len(CLASSES) * len(vocab)).reshape(len(CLASSES), -1)
    n_turns = np.bincount(turns.cls, minlength=len(CLASSES))
    return occurrences, n_turns, position_counts(turns, len(vocab))


def finish(vocab: list[str], occurrences: np.ndarray, n_turns: np.ndarray,
           where: np.ndarray) -> FreqState:
    freq = occurrences / np.maximum(n_turns, 1)[:, None]                  # [C, V]
    present = n_turns > 0                                      # a class absent from the table
    top = freq[present].max(axis=0) if present.any() else np.zeros(len(vocab))
    rate = np.where(present[:, None], top[None, :] - freq, 0.0)
    return FreqState(vocab, freq, rate, positions.profile(where))
