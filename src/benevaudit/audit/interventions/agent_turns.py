"""Agent turns of labelled dialogues, split into words and matched against cue words.

Frequency normalisation and symmetric injection act on agent turns, class by class, so both
start from the same view: which agent turns have a known class, their words, where each word
sits, and which words are cues.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from collections import Counter

from benevaudit.audit.interventions import positions, segments as seg
from benevaudit.audit.interventions.base import Edit, cue_index
from benevaudit.audit.interventions.seeding import counter, dialogue_keys, uniform
from benevaudit.audit.interventions.turns import TurnView, scatter_texts, view_turns, with_texts
from benevaudit.schema import CLASS_INDEX, CLASSES


class AgentTurns(NamedTuple):
    view: TurnView
    rows: np.ndarray            # [A] index (into view) of agent turns with a known class
    cls: np.ndarray             # [A] class index (benevaudit.schema.CLASSES order)
    unlabelled: int             # agent turns left alone: their dialogue has no known class
    segments: seg.Segments      # of the A turns
    lay: positions.Layout
    cue: np.ndarray             # [W] index of each word in the cue vocabulary, -1 if none


def agent_turns(batch: pa.RecordBatch, vocab: list[str]) -> AgentTurns:
    view = view_turns(batch)
    cls_of_row = np.array([CLASS_INDEX.get(lbl, -1) if lbl is not None else -1
                           for lbl in batch.column("label").to_pylist()], dtype=np.int64)
    cls_of_turn = cls_of_row[view.dialogue]                      # [T]
    rows = np.flatnonzero(view.is_agent & (cls_of_turn >= 0))
    unlabelled = int((view.is_agent & (cls_of_turn < 0)).sum())
    segments = seg.segment(pc.take(view.text, pa.array(rows)))
    words = seg.words(segments)
    return AgentTurns(view, rows, cls_of_turn[rows], unlabelled, segments,
                      positions.layout(segments, words), cue_index(words, vocab))


def position_counts(turns: AgentTurns, n_vocab: int) -> np.ndarray:
    """[V, 4] how often each cue occurs at each position category."""
    cats = positions.word_categories(turns.lay)
    hit = turns.cue >= 0
    flat = turns.cue[hit] * len(positions.CATEGORIES) + cats[hit]
    return np.bincount(flat, minlength=n_vocab * len(positions.CATEGORIES)).reshape(n_vocab, -1)


def turn_keys(batch: pa.RecordBatch, turns: AgentTurns, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """[A] the dialogue key and [A] the in-dialogue position of every edited turn."""
    keys = dialogue_keys(batch.column("id").to_pylist(), seed)
    return keys[turns.view.dialogue[turns.rows]], turns.view.position[turns.rows]


def insert_cues(batch: pa.RecordBatch, turns: AgentTurns, seed: int, vocab: list[str],
                cdf: np.ndarray, turn: np.ndarray, word: np.ndarray, item: np.ndarray,
                ordinal: np.ndarray) -> Edit:
    """Insert vocabulary word ``word[m]`` into turn ``turn[m]`` at a position drawn from its
    profile; ``(item, ordinal)`` name the draw so it is reproducible."""
    keys, pos = turn_keys(batch, turns, seed)
    u_cat = uniform(keys[turn], counter(pos[turn], item, ordinal, stream=1))
    u_slot = uniform(keys[turn], counter(pos[turn], item, ordinal, stream=2))
    cat = positions.draw_category(cdf, word, u_cat)
    slot = positions.draw_slots(turns.lay, turn, cat, u_slot)
    words = pa.array(vocab, pa.string()).take(pa.array(word, pa.int64()))
    edited = positions.insert_words(turns.segments, turn, slot, words)
    text = scatter_texts(turns.view, turns.rows, seg.join(edited))
    counts = Counter(inserted_words=len(turn), unlabelled_agent_turns=turns.unlabelled)
    for c, name in enumerate(CLASSES):
        counts[f"inserted_words_{name}"] += int((turns.cls[turn] == c).sum())
        counts[f"agent_turns_{name}"] += int((turns.cls == c).sum())
    return Edit(with_texts(batch, turns.view, text), counts)
