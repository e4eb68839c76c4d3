"""Word spans of many texts at once, by the rule of :data:`benevaudit.text.WORD_RE`.

A regex pass pays a fixed cost for every word it matches; here the UTF-8 bytes of a whole
string array are decoded and classified with numpy instead, so finding the words of a batch
costs a few array passes. The rule is WORD_RE's, character for character: the mask token
``[unused0]``; a run of word characters (Python's ``\\w``: ``str.isalnum()`` or ``_``) in which
an apostrophe (``'`` or ``’``) with a word character on both sides is part of the word; or any
other single character that is not whitespace (``str.isspace()``). A test checks both agree.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from benevaudit.text import MASK_TOKEN

_MASK = np.frombuffer(MASK_TOKEN.encode(), dtype=np.uint8)


class Spans(NamedTuple):
    start: np.ndarray     # [W] byte offset of each word in the data buffer
    end: np.ndarray       # [W] byte offset just past it
    per_text: np.ndarray  # [N] words per text


@cache
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """[0x110000] bool: is a word character, is whitespace (built once, ~0.3 s)."""
    chars = [chr(i) for i in range(0x110000)]
    word = np.fromiter((c.isalnum() for c in chars), dtype=bool, count=len(chars))
    word[ord("_")] = True
    space = np.fromiter((c.isspace() for c in chars), dtype=bool, count=len(chars))
    return word, space


def _decode(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte offsets of the characters of UTF-8 ``data`` and their code points."""
    lead = np.flatnonzero((data & 0xC0) != 0x80)                    # [C] first byte of each char
    b = np.concatenate([data, np.zeros(3, np.uint8)]).astype(np.uint32)
    b0, b1, b2, b3 = b[lead], b[lead + 1] & 0x3F, b[lead + 2] & 0x3F, b[lead + 3] & 0x3F
    cp = np.select(
        [b0 < 0x80, b0 < 0xE0, b0 < 0xF0],
        [b0, (b0 & 0x1F) << 6 | b1, (b0 & 0x0F) << 12 | b1 << 6 | b2],
        (b0 & 0x07) << 18 | b1 << 12 | b2 << 6 | b3)
    return lead, np.minimum(cp, 0x10FFFF)


def word_spans(texts: pa.StringArray) -> Spans:
    """Byte spans of every word of every text (offsets into ``texts.buffers()[2]``)."""
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32)[texts.offset:
                                                                 texts.offset + len(texts) + 1]
    lo, hi = int(offsets[0]), int(offsets[-1])
    if hi == lo:
        return Spans(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(len(texts), np.int64))
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[lo:hi]
    word_table, space_table = _tables()
    ascii_only = bool(data.max() < 0x80)
    if ascii_only:                                                   # a byte is a character
        lead, cp, text_first = np.empty(0, np.int64), data, (offsets - lo).astype(np.int64)
    else:
        lead, cp = _decode(data)                                     # [C] [C]
        text_first = np.searchsorted(lead, offsets - lo)             # [N+1] first char per text
    is_w, is_s = word_table[cp], space_table[cp]
    n_chars = len(cp)
    first = np.zeros(n_chars + 1, dtype=bool)                        # char opens a text
    first[text_first[:-1]] = True
    first = first[:-1]
    prev_w = _shifted(is_w, 1) & ~first
    next_w = _shifted(is_w, -1) & ~_shifted(first, -1, fill=True)
    joins = ((cp == 0x27) | (cp == 0x2019)) & prev_w & next_w
    wordish = is_w | joins
    start = (wordish & ~(_shifted(wordish, 1) & ~first)) | ~(is_s | wordish)
    k = _mask_chars(data) if ascii_only else np.searchsorted(lead, _mask_chars(data))
    text_of = np.searchsorted(text_first[:-1], k, side="right")       # "[unused0]" is one word
    k = k[np.searchsorted(text_first[:-1], k + len(_MASK) - 1, side="right") == text_of]
    start[(k[:, None] + np.arange(1, len(_MASK))).ravel()] = False
    boundary = np.flatnonzero(start | is_s | first)                  # a word ends at the next one
    j = np.flatnonzero(start[boundary])                              # boundaries that open words
    begins, end_char = boundary[j], np.append(boundary, n_chars)[j + 1]
    count = np.diff(np.searchsorted(begins, text_first))
    if ascii_only:
        return Spans(begins + lo, end_char + lo, count)
    byte_of = np.append(lead, len(data)) + lo
    return Spans(byte_of[begins], byte_of[end_char], count)


def _shifted(a: np.ndarray, by: int, fill: bool = False) -> np.ndarray:
    """``a`` moved ``by`` places right (1) or left (-1), the gap filled with ``fill``."""
    out = np.empty_like(a)
    if by > 0:
        out[0], out[1:] = fill, a[:-1]
    else:
        out[-1], out[:-1] = fill, a[1:]
    return out


def _mask_chars(data: np.ndarray) -> np.ndarray:
    """Byte offsets where the mask token begins."""
    n = len(data) - len(_MASK) + 1
    if n <= 0:
        return np.zeros(0, np.int64)
    hit = np.flatnonzero(data[:n] == _MASK[0])
    for i in range(1, len(_MASK)):
        hit = hit[data[hit + i] == _MASK[i]]
    return hit
