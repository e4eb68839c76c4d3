"""How far two cue lexicons agree: overlap of their top-k words and rank correlation.

Jaccard@k = |A_k ∩ B_k| / |A_k ∪ B_k| over each class's top-k words; Spearman's ρ over the
words both lexicons list for a class (Pearson correlation of their ranks, ties averaged), which
needs at least two shared words with varying scores. Each figure is the mean over the classes
where it is defined; a pair with no defined class is left out rather than reported as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np

from benevaudit.audit.lexicon import Lexicon

SHORT_NAMES = {"rollout": "rollout", "rollout_norm": "rollout_norm", "integrated_gradients": "ig",
               "logodds": "logodds"}


def jaccard_at_k(a: Lexicon, b: Lexicon, cls: str, k: int = 50) -> float:
    sa, sb = set(a.top(cls, k)), set(b.top(cls, k))
    return len(sa & sb) / len(sa | sb) if sa | sb else float("nan")


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their average rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman_shared(a: Lexicon, b: Lexicon, cls: str) -> float:
    """Spearman's ρ between the two lexicons' scores of the words they share for ``cls``."""
    sa = dict(zip(a.words.get(cls, ()), a.scores.get(cls, ())))
    sb = dict(zip(b.words.get(cls, ()), b.scores.get(cls, ())))
    shared = sorted(set(sa) & set(sb))
    if len(shared) < 2:
        return float("nan")
    ra = average_ranks(np.array([sa[w] for w in shared]))
    rb = average_ranks(np.array([sb[w] for w in shared]))
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _mean_defined(values: list[float]) -> float:
    vals = [v for v in values if not np.isnan(v)]
    return float(np.mean(vals)) if vals else float("nan")


def agreement_metrics(lexicons: Mapping[str, Lexicon], k: int = 50,
                      prefix: str = "attribution/") -> dict[str, float]:
    """Every pair of methods: ``{prefix}jaccard{k}_A_vs_B`` and ``{prefix}spearman_A_vs_B``.

    ``lexicons`` maps a method name (``rollout``, ``integrated_gradients``, ``logodds`` or any
    other) to its lexicon; the pairs follow the mapping's order. Undefined figures are omitted.
    """
    out: dict[str, float] = {}
    for (na, a), (nb, b) in combinations(lexicons.items(), 2):
        classes = sorted(set(a.words) & set(b.words))
        pair = f"{SHORT_NAMES.get(na, na)}_vs_{SHORT_NAMES.get(nb, nb)}"
        jac = _mean_defined([jaccard_at_k(a, b, c, k) for c in classes])
        rho = _mean_defined([spearman_shared(a, b, c) for c in classes])
        if not np.isnan(jac):
            out[f"{prefix}jaccard{k}_{pair}"] = jac
        if not np.isnan(rho):
            out[f"{prefix}spearman_{pair}"] = rho
    return out
