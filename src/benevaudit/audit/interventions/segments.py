"""Texts as interleaved gaps and words, so word edits are Arrow array edits.

A text with words w0 … w(n-1) (:data:`benevaudit.text.WORD_RE`: the mask token, a run of word
characters with inner apostrophes, or one punctuation mark) is stored as the ``2n + 1``
segments ``g0 w0 g1 w1 … w(n-1) gn``, where each gap ``gi`` is the (possibly empty) whitespace
between words. Joining the segments gives back the text byte for byte. Words are found by
:mod:`.tokens` and the segments are views into the texts' own data buffer (no copy).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions import tokens

ALNUM_START = r"^[\pL\pN_\[]"
"""A word that is not a lone punctuation mark starts with a word character or ``[unused0]``."""


class Segments(NamedTuple):
    values: pa.StringArray   # [S] gaps and words of all texts, interleaved
    offsets: np.ndarray      # [N+1] int64 first segment of each text

    @property
    def n_words(self) -> np.ndarray:
        """[N] words per text."""
        return (np.diff(self.offsets) - 1) // 2

    def word_index(self) -> np.ndarray:
        """[W] segment index of every word, texts in order (the odd local positions)."""
        n = self.n_words
        text = np.repeat(np.arange(len(n), dtype=np.int64), n)
        local = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        return self.offsets[:-1][text] + 1 + 2 * local

    def word_text(self) -> np.ndarray:
        """[W] index of the text each word belongs to."""
        n = self.n_words
        return np.repeat(np.arange(len(n), dtype=np.int64), n)


def segment(texts: pa.StringArray) -> Segments:
    texts = texts.cast(pa.string())
    spans = tokens.word_spans(texts)
    n = spans.per_text                                                # [N]
    per_text = 2 * n + 1                                              # segments per text
    first = np.cumsum(per_text) - per_text                            # [N] first segment
    bounds = np.empty(int(per_text.sum()) + 1, dtype=np.int64)        # [S+1] byte boundaries
    offs = np.frombuffer(texts.buffers()[1], dtype=np.int32)[texts.offset:
                                                              texts.offset + len(texts) + 1]
    bounds[first] = offs[:-1]
    bounds[-1] = offs[-1] if len(offs) else 0
    text = np.repeat(np.arange(len(n)), n)                            # [W]
    local = np.arange(len(text)) - np.repeat(np.cumsum(n) - n, n)
    at = first[text] + 1 + 2 * local
    bounds[at], bounds[at + 1] = spans.start, spans.end
    data = texts.buffers()[2] if len(texts) else pa.py_buffer(b"")
    values = pa.StringArray.from_buffers(len(bounds) - 1, pa.py_buffer(bounds.astype(np.int32)),
                                         data)
    return Segments(values, np.append(first, len(bounds) - 1).astype(np.int64))


def join(segments: Segments) -> pa.StringArray:
    """Concatenate each text's segments back into one string."""
    lists = pa.ListArray.from_arrays(pa.array(segments.offsets, pa.int32()), segments.values)
    return pc.binary_join(lists, "")


def words(segments: Segments) -> pa.StringArray:
    """[W] every word of every text, in order."""
    return pc.take(segments.values, pa.array(segments.word_index()))


def replace_words(segments: Segments, positions: np.ndarray, token: str) -> pa.StringArray:
    """Texts with the segments at ``positions`` replaced by ``token``."""
    hit = np.zeros(len(segments.values), dtype=bool)
    hit[positions] = True
    return join(Segments(pc.if_else(pa.array(hit), token, segments.values), segments.offsets))


def insert(segments: Segments, text: np.ndarray, before: np.ndarray,
           values: pa.StringArray) -> Segments:
    """Insert new segments: ``values[m]`` goes into text ``text[m]`` just before its local
    segment ``before[m]`` (``before`` may equal the text's segment count: at its end).
    Insertions at the same point keep the order they are given in."""
    if len(values) == 0:
        return segments
    order = np.lexsort((np.arange(len(text)), before, text))      # by text, point, given order
    text, before, values = text[order], before[order], pc.take(values, pa.array(order))
    glob = segments.offsets[:-1][text] + before                   # [M] global insert-before point
    n_seg = len(segments.values)
    before_or_at = np.cumsum(np.bincount(glob, minlength=n_seg + 1))[:n_seg]  # [S] #(glob <= j)
    new_orig = np.arange(n_seg, dtype=np.int64) + before_or_at
    new_ins = glob + np.arange(len(glob), dtype=np.int64)
    source = np.empty(n_seg + len(glob), dtype=np.int64)          # output position → source
    source[new_orig] = np.arange(n_seg)
    source[new_ins] = n_seg + np.arange(len(glob))
    merged = pa.concat_arrays([segments.values, values.cast(pa.string())])
    per_text = np.bincount(text, minlength=len(segments.offsets) - 1)
    offsets = segments.offsets + np.concatenate([[0], np.cumsum(per_text)])
    return Segments(pc.take(merged, pa.array(source)), offsets)
