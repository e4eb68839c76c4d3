"""The evaluation set: the dialogues a detector is scored on."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from benevaudit.errors import ConfigError
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.splits import _rank, assign_splits, split_by_dialogue


def evaluation_set(dialogues: Sequence[Dialogue], fraction: float, limit: int | None,
                   seed: int, by_dialogue: bool = False) -> list[Dialogue]:
    """A seeded, class-balanced ``fraction`` of the corpus, cut by matched triplet.

    It is the last ``fraction`` of each label-composition bucket in train.py's seeded triplet
    order, so ``fraction=0.1`` with train.py's seed is exactly train.py's test split and the
    fine-tuned classifier is scored on dialogues it never saw. A gold set has no matched
    triplets (``by_dialogue``): its fraction is cut per class by item. ``limit`` keeps N
    labelled dialogues taken round-robin over the classes, in that same seeded order (477 EDOS
    posts give 159 per class); unlabelled dialogues of a labelled set (descriptive strata) are
    all kept beside them, and an unlabelled corpus is cut to ``limit`` itself. Their ranges are
    the ``eval`` spec's (:class:`~benevaudit.detectors.spec.EvalSpec`).
    """
    if fraction >= 1:
        chosen = list(dialogues)
    else:
        cut = split_by_dialogue if by_dialogue else assign_splits
        split = cut(dialogues, seed, (1 - fraction, 0.0, fraction))
        chosen = [d for d in split if d.split == "test"]
    if not chosen:
        raise ConfigError(f"eval.fraction={fraction} of {len(dialogues)} dialogues is empty; "
                          "raise eval.fraction or use a larger corpus")
    if limit is None:
        return chosen
    queues: dict[str, list[Dialogue]] = defaultdict(list)
    # ties within a triplet (a gold set's items all share one) fall to a seeded hash of the id
    for d in sorted(chosen, key=lambda d: (_rank(seed, d.triplet_key), _rank(seed, (d.id,)))):
        queues[str(d.label)].append(d)
    order = [c for c in CLASSES if queues[c]]
    kept: list[Dialogue] = []
    if order:     # a labelled set: the limit counts labelled items; strata ride along
        kept = [d for d in chosen if d.label not in CLASSES]
    else:
        order = sorted(queues)
    picked: list[Dialogue] = []
    while len(picked) < limit and any(queues[c] for c in order):
        for c in order:
            if queues[c] and len(picked) < limit:
                picked.append(queues[c].pop(0))
    return picked + kept
