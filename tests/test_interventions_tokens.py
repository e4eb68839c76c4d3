"""The array machinery under the interventions: word spans, segments, slots, seeded draws."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from benevaudit.audit.interventions import positions, segments as seg
from benevaudit.audit.interventions.seeding import counter, dialogue_keys, uniform
from benevaudit.text import WORD_RE

PIECES = list("ab'’-–—.!?,;: \t\n\u00a0\u2003\x1c\x85é\u0301_1½\"“”…[]x漢\u2028\u0660") + [
    "😀", "[unused0]", "[unused0", "unused0]", "don't", "a''b", "O’Neil", "  "]


def _random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 25))) for _ in range(n)]


def test_segments_split_like_word_re_and_join_back_exactly() -> None:
    texts = _random_texts(5000, seed=0)
    arr = pa.array(texts)
    for sub, start in ((arr, 0), (arr.slice(13, 3000), 13), (pa.array(["", "x", ""]), None)):
        s = seg.segment(sub)
        joined = seg.join(s).to_pylist()
        for i, text in enumerate(sub.to_pylist()):
            values = s.values[int(s.offsets[i]):int(s.offsets[i + 1])].to_pylist()
            assert values[1::2] == WORD_RE.findall(text), repr(text)
            assert "".join(values) == joined[i] == text
            assert all(not g.strip() for g in values[0::2])          # gaps are whitespace only


def test_ascii_and_unicode_paths_agree() -> None:
    ascii_texts = ["Hi there, you're fine... [unused0]ok", "a-b 'c' d", ""]
    s1 = seg.segment(pa.array(ascii_texts))
    s2 = seg.segment(pa.array(ascii_texts + ["é"]))
    assert s1.values.to_pylist() == s2.values.to_pylist()[:len(s1.values)]


def test_insert_places_words_at_slots() -> None:
    s = seg.segment(pa.array(["Hello there. How are you.", "", "ok"]))
    out = positions.insert_words(s, np.array([0, 0, 0, 1, 2, 0]), np.array([0, 3, 5, 0, 1, 3]),
                                 pa.array(["A", "B", "C", "D", "E", "F"]))
    assert seg.join(out).to_pylist() == ["A Hello there. B F How are C you.", "D ", "ok E"]


def test_slot_categories_and_fallbacks() -> None:
    s = seg.segment(pa.array(["Hello there. How are you.", "ok"]))
    lay = positions.layout(s, seg.words(s))
    cats = positions.word_categories(lay).tolist()
    assert cats[:7] == [0, 2, 3, 1, 3, 2, 2] and cats[7] == 0
    text = np.zeros(4, dtype=np.int64)
    for k, allowed in ((0, {0}), (1, {3}), (2, {2, 6}), (3, {1, 4, 5})):
        got = positions.draw_slots(lay, text, np.full(4, k), np.array([0.0, 0.3, 0.6, 0.99]))
        assert set(got.tolist()) <= allowed and len(set(got.tolist())) == len(allowed)
    one = positions.draw_slots(lay, np.array([1, 1]), np.array([1, 3]), np.array([0.5, 0.5]))
    assert one.tolist() == [0, 1]                        # no sentence start / no medial slot


def test_draws_depend_only_on_seed_id_and_counter() -> None:
    a = dialogue_keys(["d1", "d2"], seed=3)
    assert (a == dialogue_keys(["d1", "d2"], seed=3)).all()
    assert a[0] == dialogue_keys(["d0", "d1"], seed=3)[1] and a[0] != dialogue_keys(["d1"], 4)[0]
    c = counter(np.array([0, 0, 1]), np.array([0, 1, 0]))
    u = uniform(a[[0, 0, 0]], c)
    assert len(set(u.tolist())) == 3 and ((u >= 0) & (u < 1)).all()
    big = uniform(np.repeat(a[:1], 100_000), counter(0, np.arange(100_000)))
    assert abs(big.mean() - 0.5) < 0.01
