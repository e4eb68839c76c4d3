"""Lexical and semantic diversity of a corpus: MTLD, Self-BLEU and the Vendi score.

A generated corpus whose classes differ in diversity lets a classifier separate them by style
rather than by treatment, so the study reports all three per class (and per generator × class).

- **MTLD** (McCarthy & Jarvis, 2010, "MTLD, vocd-D, and HD-D", *Behavior Research Methods*
  42(2)): walk the tokens keeping a running type-token ratio; each time it falls below the
  threshold (0.72) one factor is complete and the count restarts. The leftover segment adds a
  partial factor ``(1 - TTR) / (1 - 0.72)``. A pass's MTLD is tokens / factors; the reported
  value is the mean of a forward and a backward pass. A text whose passes complete no factor
  and leave an all-distinct remainder has no defined MTLD (NaN).
- **BLEU-4** (Papineni et al., 2002) with clipped n-gram counts against several references,
  the closest reference length for the brevity penalty (ties go to the shorter), and either no
  smoothing or the NIST "exp" smoothing (Chen & Cherry, 2014, method 3: the k-th order with no
  match gets precision ``1 / (2^k · total)``). Sentence BLEU uses the effective order (orders
  longer than the hypothesis are left out). Scores are fractions in [0, 1].
- **Self-BLEU** (Zhu et al., 2018, "Texygen"): each hypothesis is scored by sentence BLEU
  against other texts of the same cell; higher means less diverse. The study's sampling: a
  2,000-text pool, 300 hypotheses from it, 100 references each drawn from the pool without the
  hypothesis, every text truncated to 200 words, repeated for five seeds.
- **Vendi score** (Friedman & Dieng, 2023, "The Vendi Score", *TMLR*): ``exp`` of the Shannon
  entropy of the eigenvalues of ``K / n``, with ``K`` the cosine-similarity matrix of the
  items' embeddings; it reads as an effective number of distinct items (1 … n). The items'
  [CLS] embeddings come from :mod:`benevaudit.encoders.embeddings` (re-exported here).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from benevaudit.errors import ConfigError

MTLD_THRESHOLD = 0.72
SMOOTH_METHODS = ("exp", "none")


def _mtld_pass(tokens: Sequence[str], threshold: float) -> float:
    factors, seen, count = 0.0, set(), 0
    for tok in tokens:
        seen.add(tok)
        count += 1
        if len(seen) / count < threshold:
            factors += 1.0
            seen, count = set(), 0
    if count:
        factors += (1.0 - len(seen) / count) / (1.0 - threshold)
    return len(tokens) / factors if factors > 0 else math.nan


def mtld(tokens: Sequence[str], threshold: float = MTLD_THRESHOLD) -> float:
    """Bidirectional MTLD: the mean of the forward and backward passes (NaN when undefined)."""
    if not 0.0 < threshold < 1.0:
        raise ConfigError(f"MTLD threshold must lie in (0, 1), got {threshold}")
    forward = _mtld_pass(tokens, threshold)
    backward = _mtld_pass(tokens[::-1], threshold)
    return (forward + backward) / 2.0


# ---------------------------------------------------------------------------- BLEU


class BleuStats(NamedTuple):
    """BLEU's sufficient statistics for one hypothesis (or summed over a corpus)."""

    correct: tuple[int, ...]  # clipped n-gram matches per order 1..N
    total: tuple[int, ...]    # hypothesis n-grams per order 1..N
    hyp_len: int
    ref_len: int


def ngram_counts(tokens: Sequence[str], order: int) -> Counter:
    return Counter(tuple(tokens[i:i + order]) for i in range(len(tokens) - order + 1))


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to the hypothesis length; ties go to the shorter."""
    return min(ref_lens, key=lambda r: (abs(r - hyp_len), r))


def bleu_stats(hyp: Sequence[str], refs: Sequence[Sequence[str]], max_order: int = 4,
               ) -> BleuStats:
    """Clipped matches: a hypothesis n-gram counts at most as often as in any one reference."""
    if not refs:
        raise ValueError("BLEU needs at least one reference")
    correct, total = [], []
    for n in range(1, max_order + 1):
        hyp_counts = ngram_counts(hyp, n)
        ref_max: Counter = Counter()
        for r in refs:
            ref_max |= ngram_counts(r, n)  # element-wise max
        correct.append(sum(min(c, ref_max[g]) for g, c in hyp_counts.items()))
        total.append(max(len(hyp) - n + 1, 0))
    return BleuStats(tuple(correct), tuple(total), len(hyp),
                     closest_ref_len(len(hyp), [len(r) for r in refs]))


def bleu_from_stats(stats: BleuStats, smooth: str = "exp", effective_order: bool = False,
                    ) -> float:
    """BLEU in [0, 1] from sufficient statistics: brevity penalty × geometric mean precision."""
    if smooth not in SMOOTH_METHODS:
        raise ConfigError(f"unknown BLEU smoothing {smooth!r}; valid: "
                          f"{', '.join(SMOOTH_METHODS)}")
    if stats.hyp_len == 0 or not any(stats.correct):
        return 0.0
    log_precisions, halvings = [], 1.0
    for c, t in zip(stats.correct, stats.total):
        if t == 0:
            break  # no n-grams of this order or longer in the hypothesis
        if c > 0:
            log_precisions.append(math.log(c / t))
        elif smooth == "exp":
            halvings *= 2.0
            log_precisions.append(math.log(1.0 / (halvings * t)))
        else:
            return 0.0
    order = len(log_precisions) if effective_order else len(stats.correct)
    if len(log_precisions) < order:  # a missing order without effective order: zero precision
        return 0.0
    bp = 1.0 if stats.hyp_len >= stats.ref_len else math.exp(1.0 - stats.ref_len / stats.hyp_len)
    return bp * math.exp(sum(log_precisions) / order)


def sentence_bleu(hyp: Sequence[str], refs: Sequence[Sequence[str]], smooth: str = "exp",
                  max_order: int = 4) -> float:
    return bleu_from_stats(bleu_stats(hyp, refs, max_order), smooth, effective_order=True)


def corpus_bleu(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[Sequence[str]]],
                smooth: str = "exp", max_order: int = 4) -> float:
    """Corpus BLEU: statistics summed over hypotheses before the precisions are taken.

    ``refs[i]`` holds the references of ``hyps[i]``.
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference lists")
    per = [bleu_stats(h, r, max_order) for h, r in zip(hyps, refs)]
    summed = BleuStats(tuple(map(sum, zip(*(s.correct for s in per)))),
                       tuple(map(sum, zip(*(s.total for s in per)))),
                       sum(s.hyp_len for s in per), sum(s.ref_len for s in per))
    return bleu_from_stats(summed, smooth)


# ---------------------------------------------------------------------------- Self-BLEU


class SelfBleu(NamedTuple):
    mean: float                  # over seeds
    sd: float                    # sample sd over seeds (ddof=1); 0.0 for a single seed
    per_seed: tuple[float, ...]  # each: mean sentence BLEU of the seed's hypotheses


def _ngram_matrix(docs: Sequence[Sequence[str]], max_order: int) -> tuple[object, np.ndarray]:
    """Counts of every n-gram (orders 1..N) per document, CSR [docs, V], and each column's order."""
    from scipy.sparse import csr_matrix  # scipy loads on first use

    vocab: dict[tuple[str, ...], int] = {}
    rows, cols, vals = [], [], []
    for i, doc in enumerate(docs):
        for n in range(1, max_order + 1):
            for g, c in ngram_counts(doc, n).items():
                rows.append(i)
                cols.append(vocab.setdefault(g, len(vocab)))
                vals.append(c)
    order = np.empty(len(vocab), dtype=np.int64)
    for g, j in vocab.items():
        order[j] = len(g)
    matrix = csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)), dtype=np.int64)
    return matrix, order


def _pool_sentence_bleu(matrix: Any, order: np.ndarray, lengths: np.ndarray, hyp: int,
                        refs: np.ndarray, max_order: int, smooth: str) -> float:
    """Sentence BLEU of pool document ``hyp`` against pool documents ``refs`` (sparse clipping)."""
    row = matrix[hyp]
    cols, hyp_counts = row.indices, row.data                   # [g]
    ref_max = matrix[refs][:, cols].toarray().max(axis=0)     # [R, g] -> [g]
    matched = np.minimum(hyp_counts, ref_max)                 # [g]
    correct = np.bincount(order[cols], weights=matched, minlength=max_order + 1)[1:]
    hyp_len = int(lengths[hyp])
    stats = BleuStats(tuple(int(c) for c in correct),
                      tuple(max(hyp_len - n + 1, 0) for n in range(1, max_order + 1)),
                      hyp_len, closest_ref_len(hyp_len, lengths[refs].tolist()))
    return bleu_from_stats(stats, smooth, effective_order=True)


def self_bleu_seed(docs: Sequence[Sequence[str]], seed: int, n_hypotheses: int = 300,
                   n_references: int = 100, pool_size: int = 2000, max_words: int = 200,
                   smooth: str = "exp", max_order: int = 4) -> float:
    """One seed of Self-BLEU: draw a pool, hypotheses from it, and references per hypothesis.

    Smaller cells use what they have: the pool is at most the cell, the hypotheses at most the
    pool, and the references at most the rest of the pool.
    """
    if len(docs) < 2:
        return math.nan
    rng = np.random.default_rng(seed)
    pool_idx = rng.choice(len(docs), size=min(pool_size, len(docs)), replace=False)
    pool = [list(docs[i][:max_words]) for i in pool_idx]
    matrix, order = _ngram_matrix(pool, max_order)
    lengths = np.array([len(d) for d in pool])
    hyps = rng.choice(len(pool), size=min(n_hypotheses, len(pool)), replace=False)
    scores = []
    for h in hyps:
        others = np.delete(np.arange(len(pool)), h)
        refs = rng.choice(others, size=min(n_references, len(others)), replace=False)
        scores.append(_pool_sentence_bleu(matrix, order, lengths, int(h), np.sort(refs),
                                          max_order, smooth))
    return float(np.mean(scores))


def self_bleu(docs: Sequence[Sequence[str]], seeds: Sequence[int], **sampling: Any,
              ) -> SelfBleu:
    """Self-BLEU of one cell over several seeds (``sampling``: see :func:`self_bleu_seed`)."""
    per_seed = tuple(self_bleu_seed(docs, s, **sampling) for s in seeds)
    sd = float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else 0.0
    return SelfBleu(float(np.mean(per_seed)), sd, per_seed)


# ---------------------------------------------------------------------------- Vendi


def vendi_from_embeddings(x: np.ndarray) -> float:
    """Vendi score with the cosine-similarity kernel of the rows of ``x`` [n, d].

    ``K / n = X Xᵀ / n`` and ``Xᵀ X / n`` share their non-zero eigenvalues, so the smaller of
    the two (usually [d, d]) is decomposed.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError(f"expected a non-empty [n, d] embedding matrix, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)  # [n, 1]
    if np.any(norms == 0):
        raise ValueError("an embedding is all zeros: cosine similarity is undefined")
    x = x / norms
    n = len(x)
    gram = x @ x.T if n <= x.shape[1] else x.T @ x  # [n, n] or [d, d]
    return vendi_from_eigenvalues(np.linalg.eigvalsh(gram / n))


def vendi_from_kernel(k: np.ndarray) -> float:
    """Vendi score of a similarity matrix ``k`` [n, n] with a unit diagonal."""
    k = np.asarray(k, dtype=np.float64)
    return vendi_from_eigenvalues(np.linalg.eigvalsh(k / len(k)))


def vendi_from_eigenvalues(eigenvalues: np.ndarray) -> float:
    lam = np.clip(eigenvalues, 0.0, None)  # round-off can leave tiny negatives
    lam = lam[lam > 0]
    return float(np.exp(-np.sum(lam * np.log(lam))))
