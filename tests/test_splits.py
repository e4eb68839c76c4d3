"""Split invariants: 80/10/10, class-balanced, triplets kept whole, deterministic."""

import itertools
from collections import Counter

import pytest

from benevaudit.schema import CLASSES, Dialogue, Turn
from benevaudit.splits import assign_splits, leave_one_generator_out

STUDY = (0.8, 0.1, 0.1)   # the study's train/validation/test shares (conf: split.ratios)


def corpus(n_cells: int = 200, gens=("g1", "g2", "g3"), drop_every: int = 0) -> list[Dialogue]:
    out = []
    races = ["White", "Black", "Latino", "Indian", "East Asian"]
    for i, (gen, race) in enumerate(itertools.islice(itertools.cycle(itertools.product(gens, races)), n_cells)):
        user = {"age": str(i), "gender": "female", "race": race, "ability": "none"}
        for j, c in enumerate(CLASSES):
            if drop_every and i % drop_every == 0 and c == "OB":
                continue  # an incomplete triplet
            out.append(Dialogue(f"{gen}-{i}-{c}", c, "mental_health", gen, user, None,
                                (Turn("agent", "x"),)))
    return out


def test_ratios_balance_and_triplets():
    ds = assign_splits(corpus(200), seed=42, ratios=STUDY)
    per_split = Counter(d.split for d in ds)
    assert per_split == {"train": 480, "validation": 60, "test": 60}
    for s in ("train", "validation", "test"):
        by_class = Counter(d.label for d in ds if d.split == s)
        assert len(set(by_class.values())) == 1, by_class  # balanced
    splits_of_triplet = {}
    for d in ds:
        splits_of_triplet.setdefault(d.triplet_key, set()).add(d.split)
    assert all(len(v) == 1 for v in splits_of_triplet.values())


def test_deterministic_and_order_independent():
    ds = corpus(120, drop_every=7)
    a = {d.id: d.split for d in assign_splits(ds, seed=1, ratios=STUDY)}
    b = {d.id: d.split for d in assign_splits(list(reversed(ds)), seed=1, ratios=STUDY)}
    c = {d.id: d.split for d in assign_splits(ds, seed=2, ratios=STUDY)}
    assert a == b and a != c


def test_incomplete_triplets_stay_balanced():
    ds = assign_splits(corpus(300, drop_every=3), seed=0, ratios=STUDY)
    for s in ("train", "validation", "test"):
        counts = Counter(d.label for d in ds if d.split == s)
        total = sum(counts.values())
        for c in CLASSES:
            share_all = sum(d.label == c for d in ds) / len(ds)
            assert abs(counts[c] / total - share_all) < 0.03


def test_leave_one_generator_out():
    ds = leave_one_generator_out(corpus(150), "g2", seed=0)
    assert {d.generator for d in ds if d.split == "test"} == {"g2"}
    assert "g2" not in {d.generator for d in ds if d.split != "test"}
    assert Counter(d.split for d in ds if d.generator != "g2")["validation"] > 0
    with pytest.raises(ValueError, match="generators in this corpus: \\['g1', 'g2', 'g3'\\]"):
        leave_one_generator_out(ds, "nope", seed=0)


def test_by_dialogue_is_the_study_split():
    """80/10/10 by dialogue within each class; deterministic; siblings may be cut apart."""
    from benevaudit.splits import split_by_dialogue

    ds = corpus(200, drop_every=4)
    out = split_by_dialogue(ds, seed=3, ratios=STUDY)
    for c in CLASSES:
        n = sum(d.label == c for d in ds)
        got = Counter(d.split for d in out if d.label == c)
        assert got["train"] == round(0.8 * n) and got["validation"] == round(0.9 * n) - round(0.8 * n)
        assert sum(got.values()) == n
    assert [d.id for d in out] == [d.id for d in ds]
    assert {d.id: d.split for d in split_by_dialogue(list(reversed(ds)), seed=3, ratios=STUDY)} == \
        {d.id: d.split for d in out}
    assert {d.id: d.split for d in split_by_dialogue(ds, seed=4, ratios=STUDY)} != {d.id: d.split for d in out}
    triplet_splits: dict = {}
    for d in out:
        triplet_splits.setdefault(d.triplet_key, set()).add(d.split)
    assert any(len(v) > 1 for v in triplet_splits.values())  # not a triplet split in disguise
