"""Positive control for the audit: fine-tune the packaged MiniLM on a scripted corpus with cue
tokens planted in each class's agent turns at known rates; attention rollout must rank each
class's planted cues in its top 10, and deleting them must hurt the model more than deleting
as many random words. Slow tier (a few minutes of CPU)."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytestmark = pytest.mark.slow

# Settings that work (the planted cues rank 1-2 in each class's rollout top 10): signal 0, so
# the cues are the only class signal; two cues per class; rate 0.3 per agent turn, which leaves
# some dialogues of every class with no visible cue. At rate 0.5 nearly every dialogue showed
# one, the model learned OB as "neither N's nor BB's cues", and rollout (positive evidence
# only) did not list the OB cues while integrated gradients did. With signal 0.1, phrase-bank
# words outranked one OB cue.
CUES = [("certainly", "N"), ("surely", "N"), ("precisely", "OB"), ("basically", "OB"),
        ("kiddo", "BB"), ("~", "BB")]
RATE, SIGNAL, SIZE, SEED = 0.3, 0.0, 300, 7
MAX_LENGTH, EPOCHS, BATCH, LR = 128, 4, 16, 1.5e-4


@pytest.fixture(scope="module")
def control(tmp_path_factory):
    import torch

    from benevaudit.encoders.encoding import encode_texts, pad_batch
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.corpus import read_corpus
    from benevaudit.generation.embedded import ensure_scripted_sample
    from benevaudit.generation.scripted import PlantedCue
    from benevaudit.schema import CLASS_INDEX
    from benevaudit.text import render_turns

    cues = [PlantedCue(t, c, RATE) for t, c in CUES]
    path = ensure_scripted_sample(tmp_path_factory.mktemp("corpus"), SIZE, SEED, cues, SIGNAL)
    dialogues = read_corpus(path)              # whole N/OB/BB triplets, in triplet order
    cut = 3 * (len(dialogues) // 3 * 4 // 5)  # 80% of the triplets for training
    train, test = dialogues[:cut], dialogues[cut:]

    torch.manual_seed(SEED)
    tok = load_tokenizer("packaged:minilm")
    model = load_classifier("packaged:minilm", seed=SEED, attn_implementation="sdpa")
    enc = encode_texts(tok, [render_turns(d.turns) for d in train], MAX_LENGTH)
    labels = torch.tensor([CLASS_INDEX[d.label] for d in train])
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    rng = np.random.default_rng(SEED)
    model.train()
    for epoch in range(EPOCHS):
        order, total = rng.permutation(len(train)), 0.0
        for lo in range(0, len(train), BATCH):
            idx = order[lo: lo + BATCH]
            batch = pad_batch([enc.input_ids[i] for i in idx], tok.pad_token_id)
            loss = torch.nn.functional.cross_entropy(model(**batch).logits, labels[idx])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            total += loss.item() * len(idx)
        print(f"epoch {epoch}: mean training loss {total / len(train):.3f}", flush=True)
    model.eval()
    model.set_attn_implementation("eager")
    return model, tok, train, test


def test_rollout_finds_planted_cues(control):
    """Every planted cue, the mark "~" included, once marks may enter the lexicon; the default
    words-only lexicon keeps the planted words and drops the mark."""
    from benevaudit.audit.attribution.words import aggregate_lexicon, attribute_dialogues

    model, tok, _, test = control
    attrs = attribute_dialogues(model, tok, test, max_length=MAX_LENGTH, progress=False)
    res = aggregate_lexicon(attrs, top_k=10, min_count=3, words_only=False)
    print("\nrollout top-10:", {c: list(w) for c, w in res.lexicon.words.items()}, res.stats)
    assert res.stats["accuracy"] >= 0.85  # some dialogues show no cue at all
    for token, cls in CUES:
        assert token in res.lexicon.top(cls, 10), (token, cls, res.lexicon.top(cls, 10))
    words = aggregate_lexicon(attrs, top_k=10, min_count=3).lexicon
    assert "~" not in words.top("BB", 10)
    for token, cls in CUES:
        if token != "~":
            assert token in words.top(cls, 10), (token, cls, words.top(cls, 10))


def test_deleting_planted_cues_costs_more_than_random_words(control):
    from benevaudit.audit.attribution.faithfulness import delete_words, predicted_probs
    from benevaudit.audit.attribution.words import attribute_dialogues
    from benevaudit.text import MASK_TOKEN

    model, tok, _, test = control
    attrs = attribute_dialogues(model, tok, test, max_length=MAX_LENGTH, progress=False)
    planted = {t for t, _ in CUES}
    mask_id = tok.convert_tokens_to_ids(MASK_TOKEN)
    cue_del, rand_del = [], []
    for i, a in enumerate(attrs):
        cue_idx = [j for j, w in enumerate(a.words) if w.lower() in planted]
        other = [j for j in range(len(a.words)) if j not in set(cue_idx)]
        rnd = np.random.default_rng([SEED, i]).choice(other, size=len(cue_idx), replace=False)
        cue_del.append(delete_words(a.input_ids, [a.pieces[j] for j in cue_idx], mask_id))
        rand_del.append(delete_words(a.input_ids, [a.pieces[j] for j in rnd], mask_id))
    labels = [a.label for a in attrs]
    p_true = np.array([a.probs[a.label] for a in attrs])
    p_cue = predicted_probs(model, cue_del, labels, tok.pad_token_id)
    p_rand = predicted_probs(model, rand_del, labels, tok.pad_token_id)
    drop_cue, drop_rand = (p_true - p_cue).mean(), (p_true - p_rand).mean()
    print(f"\nmean p(true) drop: planted cues {drop_cue:.3f}, random words {drop_rand:.3f}")
    assert drop_cue > drop_rand + 0.1


def test_rollout_deletion_beats_random(control):
    from benevaudit.audit.attribution.faithfulness import evaluate_faithfulness

    model, tok, _, test = control
    res = evaluate_faithfulness(model, tok, test[:45], methods=("rollout",), ks=(1, 2, 5, 10),
                                max_length=MAX_LENGTH, progress=False)
    print("\n", res.metrics)
    assert res.metrics["faithfulness/aopc_rollout"] > res.metrics["faithfulness/aopc_random"]
