"""Attention rollout, integrated gradients and the token→word merge, on hand-built tensors and
the tiny random BERT."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

torch = pytest.importorskip("torch")

from benevaudit.audit.attribution import rollout  # noqa: E402
from benevaudit.audit.attribution.words import (  # noqa: E402
    DialogueAttribution,
    aggregate_lexicon,
    attribute_dialogues,
    compute_lexicon,
    merge_pieces,
)
from benevaudit.audit.lexicon import load_lexicon  # noqa: E402
from benevaudit.outputs.predictions import save_lexicon  # noqa: E402
from benevaudit.schema import CLASSES, Dialogue, Turn  # noqa: E402
from benevaudit.text import Span, word_spans  # noqa: E402


def make_dialogue(i: int, label: str, agent_text: str, user_text: str = "I need some advice.") -> Dialogue:
    return Dialogue(id=f"d{i}", label=label, role="mental_health", generator="test",
                    user={"age": "young", "gender": "female", "race": "Black", "ability": "none"},
                    agent=None, turns=(Turn("user", user_text), Turn("agent", agent_text),
                                       Turn("user", "Thanks."), Turn("agent", agent_text[:40])))


@pytest.fixture(scope="module")
def tiny():
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    return load_classifier("tiny", attn_implementation="eager", seed=3), load_tokenizer("tiny")


@pytest.fixture(scope="module")
def dialogues():
    texts = ["You poor thing, don't worry about running!", "Just walk. That is all you can do.",
             "Honey, let me handle the hard parts for you, okay?",
             "Try the 5k plan: three runs a week, and we adjust as you go.",
             "People like you should not lift weights at all.",
             "Sweetie, maybe just rest; the gym is too much for someone like you!"]
    return [make_dialogue(i, CLASSES[i % 3], t) for i, t in enumerate(texts)]


# ---------------------------------------------------------------- rollout on hand-built tensors

def test_rollout_two_token_known_answer():
    attn = [torch.tensor([[[[0.5, 0.5], [0.2, 0.8]]]])]     # [1, 1, 2, 2]
    grad = [torch.tensor([[[[1.0, -1.0], [2.0, 1.0]]]])]
    # Ā = [[.5, 0], [.4, .8]]; R = I + Ā = [[1.5, 0], [.4, 1.8]]; [CLS] row = [1.5, 0]
    row = rollout.rollout_cls_row(attn, grad, torch.ones(1, 2))
    assert torch.allclose(row, torch.tensor([[1.5, 0.0]]))
    full = rollout.rollout_full(attn, grad)
    assert torch.allclose(full, torch.tensor([[[1.5, 0.0], [0.4, 1.8]]]))


def naive_rollout(attns: list[np.ndarray], grads: list[np.ndarray],
                  normalise: bool = False) -> np.ndarray:
    """Per example, per layer, per head, with explicit matrices: [B, T]."""
    rows = []
    for b in range(attns[0].shape[0]):
        width = attns[0].shape[-1]
        rel = np.eye(width)
        for a, g in zip(attns, grads):
            heads = [np.maximum(g[b, h] * a[b, h], 0) for h in range(a.shape[1])]
            factor = np.eye(width) + sum(heads) / len(heads)
            if normalise:
                factor = factor / factor.sum(axis=1, keepdims=True)
            rel = factor @ rel
        rows.append(rel[0])
    return np.stack(rows)


def test_rollout_matches_naive_loop():
    rng = np.random.default_rng(0)
    attns = [rng.dirichlet(np.ones(7), size=(3, 4, 7)) for _ in range(5)]   # [B, H, T, T]
    grads = [rng.normal(size=(3, 4, 7, 7)) for _ in range(5)]
    expected = naive_rollout(attns, grads)
    t = [torch.tensor(x) for x in attns]
    g = [torch.tensor(x) for x in grads]
    row = rollout.rollout_cls_row(t, g, torch.ones(3, 7, dtype=torch.float64))
    np.testing.assert_allclose(row.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(rollout.rollout_full(t, g)[:, 0].numpy(), expected, rtol=1e-10)


def test_row_normalised_rollout_matches_naive_loop_and_sums_to_one():
    rng = np.random.default_rng(2)
    attns = [rng.dirichlet(np.ones(6), size=(2, 3, 6)) for _ in range(4)]   # [B, H, T, T]
    grads = [rng.normal(size=(2, 3, 6, 6)) for _ in range(4)]
    expected = naive_rollout(attns, grads, normalise=True)
    t = [torch.tensor(x) for x in attns]
    g = [torch.tensor(x) for x in grads]
    a_bars = [rollout.weighted_attention(a, b) for a, b in zip(t, g)]
    row = rollout.rollout_cls_row_reduced(a_bars, torch.ones(2, 6, dtype=torch.float64), True)
    np.testing.assert_allclose(row.numpy(), expected, rtol=1e-10)
    full = rollout.rollout_full(t, g, normalise=True)
    np.testing.assert_allclose(full[:, 0].numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(full.sum(-1).numpy(), 1.0, rtol=1e-10)   # row-stochastic
    assert not np.allclose(expected, naive_rollout(attns, grads))


def test_rollout_zeroes_padding():
    rng = np.random.default_rng(1)
    attn = [torch.tensor(rng.dirichlet(np.ones(4), size=(2, 1, 4)))]
    grad = [torch.tensor(rng.normal(size=(2, 1, 4, 4)))]
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.float64)
    row = rollout.rollout_cls_row(attn, grad, mask)
    assert (row[1, 2:] == 0).all() and (row[0] != 0).any()


# ---------------------------------------------------------------- rollout on the tiny BERT

def encoded(tok, texts):
    from benevaudit.encoders.encoding import encode_texts, pad_batch

    enc = encode_texts(tok, texts, max_length=64)
    return enc, pad_batch(enc.input_ids, tok.pad_token_id)


def test_batched_rollout_equals_one_at_a_time(tiny, dialogues):
    model, tok = tiny
    texts = [d.turns[1].text for d in dialogues[:4]]
    enc, batch = encoded(tok, texts)
    labels = [0, 1, 2, 1]
    res = rollout.batch_relevance(model, batch["input_ids"], batch["attention_mask"], labels)
    for i, ids in enumerate(enc.input_ids):
        one = rollout.batch_relevance(model, torch.tensor([ids]), torch.ones(1, len(ids),
                                      dtype=torch.long), [labels[i]])
        np.testing.assert_allclose(res.relevance[i, : len(ids)].numpy(), one.relevance[0].numpy(),
                                   rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(res.logits[i].numpy(), one.logits[0].numpy(), atol=1e-5)
        assert (res.relevance[i, len(ids):] == 0).all()


def test_hooked_rollout_equals_explicit_gradients(tiny, dialogues):
    """The streaming hooks give what the textbook recipe gives: per example, backward of the
    target logit, every layer's ∇A taken explicitly, then the full product's [CLS] row."""
    model, tok = tiny
    enc, batch = encoded(tok, [d.turns[1].text for d in dialogues[:3]])
    labels = [2, 0, 1]
    res = rollout.batch_relevance(model, batch["input_ids"], batch["attention_mask"], labels)
    for i, ids in enumerate(enc.input_ids):
        x = torch.tensor([ids])
        out = model(input_ids=x, output_attentions=True)
        grads = torch.autograd.grad(out.logits[0, labels[i]], out.attentions)
        full = rollout.rollout_full([a.detach() for a in out.attentions], grads)   # [1, T, T]
        np.testing.assert_allclose(res.relevance[i, : len(ids)].detach().numpy(),
                                   full[0, 0].numpy(), rtol=1e-4, atol=1e-6)


def test_row_normalised_relevance_sums_to_one_on_a_model(tiny, dialogues):
    model, tok = tiny
    _, batch = encoded(tok, [d.turns[1].text for d in dialogues[:3]])
    res = rollout.batch_relevance(model, batch["input_ids"], batch["attention_mask"], [0, 1, 2],
                                  normalise=True)
    assert (batch["attention_mask"] == 0).any()
    np.testing.assert_allclose(res.relevance.sum(-1).numpy(), 1.0, rtol=1e-5)
    assert (res.relevance[batch["attention_mask"] == 0] == 0).all()


def test_padding_content_does_not_leak(tiny, dialogues):
    model, tok = tiny
    _, batch = encoded(tok, [d.turns[1].text for d in dialogues[:2]])
    ids, mask = batch["input_ids"], batch["attention_mask"]
    noisy = ids.clone()
    noisy[mask == 0] = 1996  # a real word where padding was
    a = rollout.batch_relevance(model, ids, mask, [0, 2]).relevance
    b = rollout.batch_relevance(model, noisy, mask, [0, 2]).relevance
    assert (mask == 0).any()
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)


def test_rollout_targets_and_errors(tiny, dialogues):
    model, tok = tiny
    _, batch = encoded(tok, [d.turns[1].text for d in dialogues[:2]])
    args = (model, batch["input_ids"], batch["attention_mask"])
    pred = rollout.batch_relevance(*args, [None, None], "predicted")
    named = rollout.batch_relevance(*args, [None, None], CLASSES[int(pred.logits[0].argmax())])
    np.testing.assert_allclose(pred.relevance[0].numpy(), named.relevance[0].numpy(), rtol=1e-5)
    other_cls = next(c for i, c in enumerate(CLASSES) if i != int(pred.logits[0].argmax()))
    other = rollout.batch_relevance(*args, [None, None], other_cls)
    assert not torch.allclose(other.relevance[0], pred.relevance[0])
    with pytest.raises(ValueError, match="'true', 'predicted', 'N', 'OB', 'BB'"):
        rollout.batch_relevance(*args, [0, 1], "bogus")
    with pytest.raises(ValueError, match="label=None"):
        rollout.batch_relevance(*args, [0, None], "true")


def test_rollout_refuses_sdpa():
    from benevaudit.encoders.models import load_classifier

    model = load_classifier("tiny", attn_implementation="sdpa")
    with pytest.raises(ValueError, match="eager"):
        rollout.batch_relevance(model, torch.tensor([[101, 102]]), torch.ones(1, 2), [0])


# ---------------------------------------------------------------- word merge

def test_merge_pieces_known_answer():
    spans = word_spans([Turn("agent", "Hello, sweetie")])
    assert [(s.word, s.start, s.end) for s in spans] == [("Hello", 9, 14), (",", 14, 15),
                                                         ("sweetie", 16, 23)]
    # [CLS] [ agent ] : hello , sweet ##ie [SEP]
    offsets = [(0, 0), (0, 1), (1, 6), (6, 7), (7, 8), (9, 14), (14, 15), (16, 21), (21, 23), (0, 0)]
    rel, kept, pieces = merge_pieces(offsets, np.arange(1.0, 11.0), spans)
    np.testing.assert_array_equal(rel, [6.0, 7.0, 17.0])
    assert kept.all() and pieces == [[5], [6], [7, 8]]
    # truncation cut "##ie" (head end) and, separately, "sweet" (tail start)
    rel, kept, _ = merge_pieces(offsets[:8] + [(0, 0)], np.ones(9), spans)
    assert kept.tolist() == [True, True, False]
    rel, kept, _ = merge_pieces(offsets[:5] + [(21, 23), (0, 0)], np.ones(7), spans)
    assert kept.tolist() == [False, False, False]


def test_truncated_words_are_dropped_and_pieces_spell_the_word(tiny, dialogues):
    model, tok = tiny
    long = make_dialogue(9, "BB", " ".join(d.turns[1].text for d in dialogues) * 3)
    attrs = attribute_dialogues(model, tok, [long], max_length=40, head_tokens=12, progress=False)
    a = attrs[0]
    assert 0 < len(a.words) < sum(s.speaker == "agent" for s in word_spans(long.turns))
    for w, p in zip(a.words, a.pieces):
        pieces = tok.convert_ids_to_tokens([a.input_ids[i] for i in p])
        assert "".join(x.removeprefix("##") for x in pieces) == w.lower()
    assert np.isclose(np.abs(a.relevance).mean(), 1.0)  # per-dialogue normalisation


def attribution(target: int, words: list[str], rel: list[float], label: int | None = None):
    spans = [Span(w, i, i + 1, 0, "agent") for i, w in enumerate(words)]
    return DialogueAttribution("x", label, target, np.array([0.2, 0.3, 0.5]), [], words, spans,
                               np.array(rel), [[] for _ in words])


def test_aggregate_lexicon_known_answer():
    attrs = [attribution(0, ["Calm", "down", "calm"], [3.0, 1.0, 1.0], 0),
             attribution(0, ["down", "calm", "now"], [2.0, 2.0, 9.0], 0),
             attribution(2, ["Sweetie", "sweetie"], [4.0, 2.0], 2)]
    res = aggregate_lexicon(attrs, top_k=5, min_count=2)
    # N: calm (3+1+2)/3 = 2.0, down (1+2)/2 = 1.5; "now" seen once -> filtered
    assert res.lexicon.words == {"N": ("calm", "down"), "BB": ("sweetie",)}
    np.testing.assert_allclose(res.lexicon.scores["N"], [2.0, 1.5])
    assert res.stats["accuracy"] == pytest.approx(1 / 3)  # probs argmax is BB
    assert aggregate_lexicon(attrs, top_k=1, min_count=1).lexicon.words["N"] == ("now",)


def test_compute_lexicon_rollout_and_ig_same_format(tiny, dialogues, tmp_path):
    model, tok = tiny
    for method in ("rollout", "rollout_norm", "integrated_gradients"):
        res = compute_lexicon(model, tok, dialogues, method=method, top_k=4, min_count=1,
                              batch_size=4, progress=False, n_steps=4)
        assert set(res.lexicon.words) == set(CLASSES)
        for c in CLASSES:
            scores = res.lexicon.scores[c]
            assert 0 < len(scores) <= 4 and list(scores) == sorted(scores, reverse=True)
        assert res.stats["n_dialogues"] == len(dialogues)
        path = save_lexicon(res.lexicon, tmp_path / f"{method}.json")
        assert load_lexicon(path) == res.lexicon
    with pytest.raises(ValueError, match="'rollout', 'rollout_norm', 'integrated_gradients'"):
        compute_lexicon(model, tok, dialogues, method="lime")


def test_ig_completeness(tiny, dialogues):
    """IG attributions sum to f(input) − f(baseline) (up to the integration error)."""
    from benevaudit.audit.attribution import integrated_gradients as ig

    model, tok = tiny
    _, batch = encoded(tok, [dialogues[0].turns[1].text])
    ids, mask = batch["input_ids"], batch["attention_mask"]
    keep = (tok.cls_token_id, tok.sep_token_id)
    res = ig.batch_relevance(model, ids, mask, [1], pad_id=tok.pad_token_id, keep_ids=keep,
                             n_steps=200)
    with torch.no_grad():
        base = model(input_ids=ig.pad_baseline(ids, tok.pad_token_id, keep),
                     attention_mask=mask).logits
    assert res.relevance.sum().item() == pytest.approx(
        (res.logits[0, 1] - base[0, 1]).item(), abs=2e-3)


# ---------------------------------------------------------------- batching by token budget

def test_length_batches_respects_size_and_token_budget():
    from benevaudit.audit.attribution.words import length_batches

    lengths = [50, 10, 300, 20, 600, 30, 40]
    plain = length_batches(lengths, batch_size=3)
    assert plain == [[1, 3, 5], [6, 0, 2], [4]]           # shortest first, 3 at a time
    capped = length_batches(lengths, batch_size=3, max_tokens=100)
    assert sorted(i for b in capped for i in b) == list(range(len(lengths)))
    for b in capped:
        assert len(b) <= 3
        assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 100
    assert [4] in capped and [2] in capped               # over the budget alone: own batch
    assert capped[0] == [1, 3, 5]                          # 3 × 30 = 90 fits


def test_batch_token_cap_resolution():
    from benevaudit.audit.attribution.words import CPU_BATCH_TOKENS, batch_token_cap
    from benevaudit.errors import ConfigError

    assert batch_token_cap("auto", torch.device("cpu")) == CPU_BATCH_TOKENS
    assert batch_token_cap("auto", torch.device("cuda", 0)) is None
    assert batch_token_cap(None, torch.device("cpu")) is None
    assert batch_token_cap(0, torch.device("cpu")) is None
    assert batch_token_cap(2048, torch.device("cpu")) == 2048
    for bad in ("fast", -5, 1.5, True):
        with pytest.raises(ConfigError, match="max_batch_tokens"):
            batch_token_cap(bad, torch.device("cpu"))


def test_token_budget_does_not_change_relevance(tiny, dialogues):
    model, tok = tiny
    free = attribute_dialogues(model, tok, dialogues, batch_size=6, max_length=64,
                               progress=False, max_batch_tokens=None)
    capped = attribute_dialogues(model, tok, dialogues, batch_size=6, max_length=64,
                                 progress=False, max_batch_tokens=40)
    for a, b in zip(free, capped):
        assert a.id == b.id and a.words == b.words
        np.testing.assert_allclose(a.relevance, b.relevance, rtol=1e-4, atol=1e-6)


def test_attention_implementation_switches_and_restores():
    from benevaudit.encoders.models import attention_implementation, load_classifier

    model = load_classifier("tiny", attn_implementation="eager", seed=3).eval()
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102]])
    eager = model(input_ids=ids).logits
    with attention_implementation(model, "sdpa") as m:
        assert m.config._attn_implementation == "sdpa"
        sdpa = m(input_ids=ids).logits
    assert model.config._attn_implementation == "eager"
    torch.testing.assert_close(eager, sdpa, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError), attention_implementation(model, "sdpa"):
        raise RuntimeError("restored even when the block fails")
    assert model.config._attn_implementation == "eager"


def test_integrated_gradients_leaves_the_model_eager(tiny, dialogues):
    model, tok = tiny
    attribute_dialogues(model, tok, dialogues[:2], "integrated_gradients", max_length=64,
                        progress=False, n_steps=4)
    assert model.config._attn_implementation == "eager"
    rollout.batch_relevance(model, torch.tensor([[101, 2023, 102]]), torch.ones(1, 3), [0])
