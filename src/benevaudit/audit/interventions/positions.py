"""Where a word sits in an agent turn, and where inserted words go.

Frequency normalisation and symmetric injection insert cue words "at positions drawn from the
word's observed position profile", so an inserted cue looks like the cue where it occurs
naturally. Positions fall in four categories, judged on the words of a turn (punctuation
marks are words; after punctuation folding every sentence ends in a period):

- ``turn_initial``: the first word of the turn;
- ``sentence_initial``: the first word after a sentence end (``. ! ? …``);
- ``sentence_final``: the last word before a sentence end, or the last word of the turn;
- ``medial``: anything else.

An insertion picks a category from the profile, then a slot of that category uniformly in the
turn: slot ``i`` is "before word ``i``" (slot ``n`` is the end). Sentence-final slots are just
before a sentence end (or the end of a turn that lacks one); medial slots lie between two
words of one sentence. A turn without a slot of the drawn category falls back to the turn's
start (sentence-initial) or end (sentence-final, medial). A cue never seen in the edited data
gets a uniform profile.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions import segments as seg

CATEGORIES: tuple[str, ...] = ("turn_initial", "sentence_initial", "sentence_final", "medial")
TERMINATORS: tuple[str, ...] = (".", "!", "?", "…")


class Layout(NamedTuple):
    """Word layout of N texts."""

    n: np.ndarray          # [N] words per text
    start: np.ndarray      # [N] index of each text's first word in the flat word array
    is_term: np.ndarray    # [W] word ends a sentence


def layout(segments: seg.Segments, words: pa.StringArray) -> Layout:
    n = segments.n_words
    is_term = pc.is_in(words, value_set=pa.array(TERMINATORS)).to_numpy(zero_copy_only=False)
    return Layout(n, np.cumsum(n) - n, is_term)


def word_categories(lay: Layout) -> np.ndarray:
    """[W] int8 category of every word."""
    text = np.repeat(np.arange(len(lay.n)), lay.n)
    local = np.arange(len(text)) - lay.start[text]
    first, last = local == 0, local == lay.n[text] - 1
    prev_term = np.concatenate([[False], lay.is_term[:-1]]) & ~first
    next_term = np.concatenate([lay.is_term[1:], [False]]) & ~last
    return np.select([first, prev_term, next_term | last], [0, 1, 2], 3).astype(np.int8)


def profile(counts: np.ndarray) -> np.ndarray:
    """[V, 4] category counts → cumulative probabilities; unseen words get a uniform profile."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum(axis=1, keepdims=True)
    p = np.where(total > 0, counts / np.maximum(total, 1), 0.25)
    return np.cumsum(p, axis=1)


def draw_category(cdf: np.ndarray, word: np.ndarray, u: np.ndarray) -> np.ndarray:
    """[M] category index for insertions of vocabulary words ``word`` with draws ``u``."""
    return (cdf[word, :3] <= u[:, None]).sum(axis=1)


def _slot_flags(lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[S, 4] bool category of every slot, [S] its text, [S] its local index (S = Σ(n+1))."""
    slots = lay.n + 1
    text = np.repeat(np.arange(len(slots)), slots)
    i = np.arange(len(text)) - np.repeat(np.cumsum(slots) - slots, slots)
    n = lay.n[text]
    inside = (i >= 1) & (i < n)
    term = np.append(lay.is_term, False)                         # [W+1] a False to index past ends
    right_term = term[np.where(i < n, lay.start[text] + i, len(lay.is_term))]
    left_term = term[np.where(i >= 1, lay.start[text] + i - 1, len(lay.is_term))]
    flags = np.stack([
        i == 0,
        inside & left_term,
        (inside & right_term) | ((i == n) & (i > 0) & ~left_term),
        inside & ~left_term & ~right_term,
    ], axis=1)
    return flags, text, i


def draw_slots(lay: Layout, text: np.ndarray, category: np.ndarray, u: np.ndarray) -> np.ndarray:
    """[M] local slot for insertions into texts ``text`` with categories and draws ``u``."""
    flags, slot_text, slot_i = _slot_flags(lay)
    out = np.where(category == 1, 0, lay.n[text])                # fallbacks: start or end
    for k in range(len(CATEGORIES)):
        sel = np.flatnonzero(category == k)
        if not len(sel):
            continue
        where = np.flatnonzero(flags[:, k])                      # slots of category k, by text
        count = np.bincount(slot_text[where], minlength=len(lay.n))
        first = np.cumsum(count) - count
        c = count[text[sel]]
        ok = c > 0
        pick = first[text[sel][ok]] + np.minimum((u[sel][ok] * c[ok]).astype(np.int64), c[ok] - 1)
        out[sel[ok]] = slot_i[where[pick]]
    return out


def insert_words(segments: seg.Segments, text: np.ndarray, slot: np.ndarray,
                 words: pa.StringArray) -> seg.Segments:
    """Insert ``words[m]`` at slot ``slot[m]`` of text ``text[m]``, spaced as a word."""
    at_start = pa.array(slot == 0)
    values = pc.if_else(at_start, pc.binary_join_element_wise(words, " ", ""),
                        pc.binary_join_element_wise(" ", words, ""))
    before = np.where(slot == 0, 1, 2 * slot)
    return seg.insert(segments, text, before, values)
