"""Model-free cue lexicon: log-odds ratios with an informative Dirichlet prior
(Monroe, Colaresi & Quinn, 2008, "Fightin' words").

It asks what the *data* make distinctive of each class, with no classifier involved, so
agreement with the attribution lexicons separates cues the model learned from cues it merely
could have learned. Counts are lowercase agent-turn words (the word rule of
:mod:`benevaudit.text`) of the training data alone, each class against the other two pooled.

For word w, class counts y_w (n = Σ_w y_w) and rest counts y'_w (n'), prior α_w (α0 = Σ_w α_w):

    δ_w  = log((y_w + α_w) / (n + α0 − y_w − α_w)) − log((y'_w + α_w) / (n' + α0 − y'_w − α_w))
    σ²_w ≈ 1 / (y_w + α_w) + 1 / (y'_w + α_w)
    z_w  = δ_w / σ_w

The prior is informative: α_w = prior_scale · (count of w over all classes), the corpus as its
own background, which shrinks rare words towards zero rather than letting them top the list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from benevaudit.audit.attribution.words import LexiconResult, is_word
from benevaudit.audit.lexicon import lexicon_from_ranked
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import word_spans


def class_counts(dialogues: Sequence[Dialogue]) -> dict[str, Counter]:
    """Lowercase agent-turn word counts per class; unlabelled dialogues are an error."""
    counts: dict[str, Counter] = {c: Counter() for c in CLASSES}
    for d in dialogues:
        if d.label not in counts:
            raise ValueError(f"dialogue {d.id!r}: label {d.label!r} is not one of {list(CLASSES)}; "
                             "log-odds lexicons need labelled training dialogues")
        counts[d.label].update(s.word.lower() for s in word_spans(d.turns) if s.speaker == "agent")
    return counts


def logodds_z(target: np.ndarray, rest: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """z-scores of the log-odds ratio target vs rest; all arrays [V] over one vocabulary."""
    n, n_rest, a0 = target.sum(), rest.sum(), prior.sum()
    delta = (np.log((target + prior) / (n + a0 - target - prior))
             - np.log((rest + prior) / (n_rest + a0 - rest - prior)))
    var = 1.0 / (target + prior) + 1.0 / (rest + prior)
    return delta / np.sqrt(var)


def logodds_scores(dialogues: Sequence[Dialogue], prior_scale: float = 1.0, *,
                   min_count: int) -> dict[str, dict[str, float]]:
    """Every class's z-score for every word type seen at least ``min_count`` times in total."""
    if prior_scale <= 0:
        raise ValueError(f"prior_scale must be positive, got {prior_scale}")
    counts = class_counts(dialogues)
    vocab = sorted(set().union(*counts.values()))
    mat = np.array([[counts[c][w] for w in vocab] for c in CLASSES], dtype=float).reshape(
        len(CLASSES), len(vocab))                                           # [C, V]
    total = mat.sum(axis=0)                                                 # [V]
    prior = prior_scale * total
    keep = total >= min_count  # totals n, n', α0 still run over the whole vocabulary
    scores = {}
    for i, c in enumerate(CLASSES):
        z = logodds_z(mat[i], total - mat[i], prior)
        scores[c] = {w: float(v) for w, v, k in zip(vocab, z, keep) if k}
    return scores


def logodds_lexicon(dialogues: Sequence[Dialogue], top_k: int, min_count: int,
                    prior_scale: float = 1.0, *, words_only: bool) -> LexiconResult:
    """Top ``top_k`` words per class by z-score, from (training) dialogues alone
    (punctuation marks left out with ``words_only``, as in the attribution lexicons)."""
    scores = logodds_scores(dialogues, prior_scale, min_count=min_count)
    ranked = {c: sorted(((w, z) for w, z in s.items() if is_word(w) or not words_only),
                        key=lambda x: (-x[1], x[0]))[:top_k] for c, s in scores.items()}
    stats = {"n_dialogues": float(len(dialogues)), "n_types": float(len(scores[CLASSES[0]]))}
    return LexiconResult(lexicon_from_ranked(ranked), stats)
