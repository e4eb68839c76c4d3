"""Deterministic train/validation/test splits: by matched triplet (the default), or by dialogue.

A matched triplet is the N/OB/BB dialogues of one condition (same user and agent demographics,
role and generator). Splitting by triplet keeps the near-duplicate siblings of a test dialogue
out of training. Triplets are bucketed by their label composition and each bucket is cut
80/10/10, so classes stay balanced across splits even when some triplets are incomplete.
Order within a bucket comes from a seeded hash of the triplet key, so the assignment does not
depend on file order.

The study splits "by dialogue", 80/10/10 and class-balanced (:func:`split_by_dialogue`,
``split.strategy=dialogue``). There a test dialogue's matched siblings, which share its user,
agent, role and most of its scaffolding, usually sit in training, so test scores can reward
recognising the scaffolding. The triplet split is the stricter reading and the default.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Annotated, Literal, Optional

from pydantic import Field, model_validator

from benevaudit.corpus import CorpusError
from benevaudit.errors import ConfigError
from benevaudit.schema import SPLITS, Dialogue
from benevaudit.specs import Fraction, Spec

RATIOS = "three numbers in [0, 1] for train, validation and test, e.g. [0.8, 0.1, 0.1]"


class SplitSpec(Spec):
    """The ``split`` block: how a corpus is cut into train, validation and test."""

    strategy: Literal["triplet", "dialogue", "existing", "leave_one_generator_out"]
    ratios: Annotated[list[Fraction], Field(min_length=3, max_length=3, description=RATIOS)]
    generator: Optional[str] = None

    @model_validator(mode="after")
    def not_empty(self) -> SplitSpec:
        if sum(self.ratios) <= 0:
            raise ConfigError(f"split.ratios={self.ratios!r}: expected {RATIOS}")
        return self


def _rank(seed: int, key: tuple) -> str:
    return hashlib.sha256(f"{seed}|{key!r}".encode()).hexdigest()


def _groups(dialogues: Sequence[Dialogue]) -> dict[tuple, list[int]]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, d in enumerate(dialogues):
        groups[d.triplet_key].append(i)
    return groups


def _cut(keys: Sequence[object], ratios: Sequence[float]) -> list[str]:
    """Split names for ``keys`` (already in seeded order), by cumulative ratio."""
    n, total = len(keys), sum(ratios)
    bounds, acc = [], 0.0
    for r in ratios:
        acc += r / total
        bounds.append(round(acc * n))
    names = []
    for i in range(n):
        names.append(next(s for s, b in zip(SPLITS, bounds) if i < b))
    return names


def assign_splits(dialogues: Sequence[Dialogue], seed: int,
                  ratios: Sequence[float]) -> list[Dialogue]:
    """Return the dialogues with ``split`` set: 80/10/10 by triplet, balanced across classes."""
    if len(ratios) != 3 or min(ratios) < 0 or sum(ratios) <= 0:
        raise ValueError(f"ratios must be three non-negative numbers, got {list(ratios)}")
    groups = _groups(dialogues)
    buckets: dict[tuple, list[tuple]] = defaultdict(list)
    for key, idx in groups.items():
        buckets[tuple(sorted(str(dialogues[i].label) for i in idx))].append(key)
    split_of: dict[tuple, str] = {}
    for sig in sorted(buckets):
        keys = sorted(buckets[sig], key=lambda k: _rank(seed, k))
        split_of.update(zip(keys, _cut(keys, ratios)))
    return [dataclasses.replace(d, split=split_of[d.triplet_key]) for d in dialogues]


def split_by_dialogue(dialogues: Sequence[Dialogue], seed: int,
                      ratios: Sequence[float]) -> list[Dialogue]:
    """Return the dialogues with ``split`` set: 80/10/10 by dialogue within each class (the
    study's split), so every split has the corpus's class shares; triplets may be cut apart."""
    if len(ratios) != 3 or min(ratios) < 0 or sum(ratios) <= 0:
        raise ValueError(f"ratios must be three non-negative numbers, got {list(ratios)}")
    by_label: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(dialogues):
        by_label[str(d.label)].append(i)
    split_of: dict[int, str] = {}
    for label in sorted(by_label):
        idx = sorted(by_label[label], key=lambda i: _rank(seed, (dialogues[i].id,)))
        split_of.update(zip(idx, _cut(idx, ratios)))
    return [dataclasses.replace(d, split=split_of[i]) for i, d in enumerate(dialogues)]


def leave_one_generator_out(dialogues: Sequence[Dialogue], generator: str, seed: int,
                            validation_ratio: float = 0.1) -> list[Dialogue]:
    """Test on one generator's dialogues; train/validation on the others, split by triplet."""
    held = [d for d in dialogues if d.generator == generator]
    if not held:
        found = sorted({d.generator for d in dialogues})
        raise ValueError(f"leave-one-generator-out: no dialogues from {generator!r}; "
                         f"generators in this corpus: {found}")
    rest = assign_splits([d for d in dialogues if d.generator != generator], seed,
                         (1 - validation_ratio, validation_ratio, 0.0))
    by_id = {d.id: d for d in rest}
    by_id.update({d.id: dataclasses.replace(d, split="test") for d in held})
    return [by_id[d.id] for d in dialogues]


def split_counts(dialogues: Sequence[Dialogue]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for d in dialogues:
        counts[str(d.split)][str(d.label)] += 1
    return {s: dict(c) for s, c in counts.items()}


def apply_split(dialogues: Sequence[Dialogue], split: SplitSpec, seed: int) -> list[Dialogue]:
    """The dialogues with their ``split`` set by ``split.strategy`` (the ``split`` options)."""
    if split.strategy == "triplet":
        return assign_splits(dialogues, seed, split.ratios)
    if split.strategy == "dialogue":
        return split_by_dialogue(dialogues, seed, split.ratios)
    if split.strategy == "leave_one_generator_out":
        if not split.generator:
            raise ConfigError("split.strategy=leave_one_generator_out needs split.generator=<name>")
        found = sorted({d.generator for d in dialogues})
        if split.generator not in found:
            raise ConfigError(f"split.generator={split.generator!r}: no dialogues from it; "
                              f"generators in this corpus: {found}")
        return leave_one_generator_out(dialogues, split.generator, seed)
    missing = sum(d.split is None for d in dialogues)   # existing: the corpus's own
    if missing:
        raise CorpusError(f"split.strategy=existing, but {missing} dialogues have no 'split'")
    return list(dialogues)


def by_split(dialogues: Sequence[Dialogue]) -> dict[str, list[Dialogue]]:
    """The dialogues grouped by split; an empty split fails, naming it."""
    out: dict[str, list[Dialogue]] = {s: [] for s in SPLITS}
    for d in dialogues:
        if d.split not in SPLITS:
            raise CorpusError(f"dialogue {d.id!r}: split {d.split!r} is none of {list(SPLITS)}")
        out[str(d.split)].append(d)
    for s in SPLITS:
        if not out[s]:
            raise ConfigError(f"the '{s}' split is empty ({len(dialogues)} dialogues in all); "
                             "use a larger corpus or other split.ratios")
    return out
