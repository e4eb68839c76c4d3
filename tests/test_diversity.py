"""MTLD, BLEU / Self-BLEU and Vendi against hand-computed cases and independent implementations."""

import importlib.resources
import math
import sys
import types

import numpy as np
import pytest

from benevaudit.metrics.diversity import (
    bleu_stats, corpus_bleu, mtld, self_bleu, self_bleu_seed, sentence_bleu,
    vendi_from_embeddings, vendi_from_kernel,
)


@pytest.fixture(scope="module")
def lex_div():
    """lexical_diversity 0.1.1 imports pkg_resources, which recent setuptools no longer ships."""
    try:
        import pkg_resources  # noqa: F401
    except ImportError:
        shim = types.ModuleType("pkg_resources")
        shim.resource_filename = lambda pkg, name: str(importlib.resources.files(pkg) / name)
        sys.modules["pkg_resources"] = shim
    from lexical_diversity import lex_div

    return lex_div


def random_texts(n: int, seed: int, vocab: int = 40) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)  # Zipf-like: repeats, as in real text
    return [list(rng.choice([f"w{i}" for i in range(vocab)], size=rng.integers(20, 120),
                            p=p / p.sum())) for _ in range(n)]


# ---------------------------------------------------------------------------- MTLD


def test_mtld_hand_computed_partial_factor():
    # forward  a a | b c d : factor at "a a" (TTR .5), remainder TTR 1 -> 0 partial: 5 / 1 = 5
    # backward d c b a a   : no factor; TTR 4/5 = .8 -> partial (1-.8)/.28 = 5/7: 5 / (5/7) = 7
    assert mtld("a a b c d".split()) == pytest.approx((5 + 7) / 2)


def test_mtld_factor_closed_by_last_word_leaves_no_partial():
    # backward c b a b a: TTR 3/5 = .6 at the last word closes a full factor: 5 / 1 = 5
    assert mtld("a b a b c".split()) == pytest.approx(5.0)


def test_mtld_undefined_without_any_factor():
    assert math.isnan(mtld("all words are distinct".split()))
    with pytest.raises(ValueError, match="threshold"):
        mtld(["a"], threshold=1.0)


def test_mtld_matches_lexical_diversity(lex_div):
    """lex_div.mtld is McCarthy & Jarvis's bidirectional MTLD (mtld_ma_bid is the moving-average
    variant, another measure). It differs from the definition only when the last word of a pass
    closes a factor (it then takes a partial factor > 1); a distinct first and last word rules
    that out, so the two must agree exactly."""
    for i, toks in enumerate(random_texts(30, seed=1)):
        toks = ["<first>", *toks, "<last>"]
        assert mtld(toks) == pytest.approx(lex_div.mtld(toks, min=1), rel=1e-12), i


# ---------------------------------------------------------------------------- BLEU


def sacre(**kw):
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize="none", **kw)


@pytest.mark.parametrize("smooth", ["exp", "none"])
def test_sentence_bleu_matches_sacrebleu(smooth: str):
    metric = sacre(smooth_method=smooth, effective_order=True)
    texts = random_texts(24, seed=2, vocab=15)
    for i in range(0, 24, 4):
        hyp, refs = texts[i], texts[i + 1:i + 4]
        expected = metric.sentence_score(" ".join(hyp), [" ".join(r) for r in refs]).score / 100
        assert sentence_bleu(hyp, refs, smooth=smooth) == pytest.approx(expected, abs=1e-12)


def test_sentence_bleu_short_and_unmatched_hypotheses_match_sacrebleu():
    metric = sacre(smooth_method="exp", effective_order=True)
    cases = [
        ("a b".split(), ["a b c d".split()]),             # effective order 2, brevity penalty
        ("a b c d e".split(), ["a b c x e".split()]),     # no 3- or 4-gram match: exp smoothing
        ("x y z".split(), ["a b c".split()]),             # no match at all
        ("a b c d".split(), ["a b".split(), "a b c d e f".split()]),  # length tie -> shorter ref
    ]
    for hyp, refs in cases:
        expected = metric.sentence_score(" ".join(hyp), [" ".join(r) for r in refs]).score / 100
        assert sentence_bleu(hyp, refs) == pytest.approx(expected, abs=1e-12), hyp


def test_bleu_clips_by_the_max_count_in_any_one_reference():
    stats = bleu_stats("the the the the".split(), ["the cat".split(), "the the dog".split()])
    assert stats.correct[0] == 2 and stats.total[0] == 4


def test_corpus_bleu_matches_sacrebleu():
    texts = random_texts(30, seed=3, vocab=12)
    hyps, refs = texts[:10], [texts[10 + i:12 + i] for i in range(10)]  # two refs each
    streams = [[" ".join(r[k]) for r in refs] for k in range(2)]
    expected = sacre().corpus_score([" ".join(h) for h in hyps], streams).score / 100
    assert corpus_bleu(hyps, refs) == pytest.approx(expected, abs=1e-12)


def test_identical_texts_score_one():
    text = "we will get through this together , one step at a time".split()
    assert sentence_bleu(text, [text]) == pytest.approx(1.0)


# ---------------------------------------------------------------------------- Self-BLEU


def test_self_bleu_sparse_path_equals_plain_sentence_bleu():
    """With the whole pool as references, Self-BLEU is the mean sentence BLEU of each text against
    all the others (the hypothesis itself excluded), whatever order the sampler draws."""
    docs = random_texts(12, seed=4, vocab=20)
    trunc = [d[:30] for d in docs]
    expected = np.mean([sentence_bleu(trunc[i], trunc[:i] + trunc[i + 1:]) for i in range(12)])
    got = self_bleu_seed(docs, seed=0, n_hypotheses=12, n_references=11, pool_size=12,
                         max_words=30)
    assert got == pytest.approx(expected, abs=1e-12)


def test_self_bleu_excludes_the_hypothesis_from_its_references():
    docs = [[f"d{i}w{j}" for j in range(50)] for i in range(8)]  # no word shared between texts
    assert self_bleu_seed(docs, seed=0, n_references=3) == 0.0  # 1.0 if it saw itself


def test_self_bleu_is_seeded_and_reports_mean_and_sd():
    docs = random_texts(60, seed=6)
    kw = dict(n_hypotheses=10, n_references=5, pool_size=40, max_words=50)
    a, b = self_bleu(docs, [0, 1, 2], **kw), self_bleu(docs, [0, 1, 2], **kw)
    assert a == b and len(a.per_seed) == 3
    assert a.mean == pytest.approx(np.mean(a.per_seed))
    assert a.sd == pytest.approx(np.std(a.per_seed, ddof=1)) and a.sd > 0
    assert self_bleu(docs, [7], **kw).sd == 0.0
    assert math.isnan(self_bleu_seed(docs[:1], seed=0))


def test_redundant_cell_scores_higher_than_diverse_cell():
    diverse = random_texts(40, seed=7, vocab=400)
    redundant = [["please", "rest", "and", "take", "it", "easy", "today"] * 5 + d[:5]
                 for d in diverse]
    kw = dict(n_hypotheses=20, n_references=10, pool_size=40)
    assert self_bleu_seed(redundant, 0, **kw) > self_bleu_seed(diverse, 0, **kw) + 0.3


# ---------------------------------------------------------------------------- Vendi


def test_vendi_matches_vendi_score_package():
    from vendi_score import vendi

    rng = np.random.default_rng(8)
    for n, d in [(40, 8), (5, 16)]:  # the [d, d] and the [n, n] decomposition paths
        x = rng.normal(size=(n, d))
        assert vendi_from_embeddings(x) == pytest.approx(vendi.score_X(x), rel=1e-9)
        k = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (
            x / np.linalg.norm(x, axis=1, keepdims=True)).T
        assert vendi_from_kernel(k) == pytest.approx(vendi.score_K(k), rel=1e-9)


def test_vendi_counts_effective_distinct_items():
    basis = np.eye(4)
    assert vendi_from_embeddings(basis) == pytest.approx(4.0)                   # orthogonal
    assert vendi_from_embeddings(np.repeat(basis[:1], 6, axis=0)) == pytest.approx(1.0)
    assert vendi_from_embeddings(np.repeat(basis[:2], 3, axis=0)) == pytest.approx(2.0)
    assert vendi_from_embeddings(3.0 * basis) == pytest.approx(4.0)             # cosine: scale-free
    with pytest.raises(ValueError, match="all zeros"):
        vendi_from_embeddings(np.zeros((2, 3)))


def test_tiny_embedder_gives_cls_vectors_in_input_order():
    from benevaudit.encoders.embeddings import cls_embeddings

    texts = ["[agent]: a much longer text " * 20, "[user]: hi", "[agent]: hello"]
    emb = cls_embeddings(texts, "tiny", batch_size=2, max_length=64)
    assert emb.shape == (3, 64) and np.isfinite(emb).all()
    alone = cls_embeddings(texts[1:2], "tiny", batch_size=2, max_length=64)
    np.testing.assert_allclose(emb[1], alone[0], atol=1e-5)  # padding does not leak into [CLS]
