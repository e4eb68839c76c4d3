"""Resumable attribution: finished batches are stored per model and settings, read back on the
next pass, and an interrupted pass computes only what is missing."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

torch = pytest.importorskip("torch")

from benevaudit.audit.attribution import words  # noqa: E402
from benevaudit.audit.attribution.store import AttributionCache, model_fingerprint  # noqa: E402
from benevaudit.schema import CLASSES, Dialogue, Turn  # noqa: E402

TEXTS = ["You poor thing, don't worry about running!", "Just walk. That is all you can do.",
         "Honey, let me handle the hard parts for you, okay?",
         "Try the 5k plan: three runs a week, and we adjust as you go.",
         "People like you should not lift weights at all.",
         "Sweetie, maybe just rest; the gym is too much for someone like you!"]


def dialogue(i: int, text: str) -> Dialogue:
    return Dialogue(id=f"d{i}", label=CLASSES[i % 3], role="fitness", generator="test",
                    user={"age": "elder", "gender": "male", "race": "Asian", "ability": "none"},
                    agent=None, turns=(Turn("user", "Can I train for a race?"), Turn("agent", text)))


@pytest.fixture(scope="module")
def tiny():
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    return load_classifier("tiny", attn_implementation="eager", seed=5), load_tokenizer("tiny")


@pytest.fixture
def counted(monkeypatch):
    """Count the dialogues that reach the model; optionally fail after ``fail_after`` batches."""
    state = {"dialogues": 0, "batches": 0, "fail_after": None}
    real = words.relevance_fn

    def relevance_fn(method, tokenizer, n_steps=50):
        fn = real(method, tokenizer, n_steps)

        def wrapped(model, input_ids, *args, **kwargs):
            if state["fail_after"] is not None and state["batches"] >= state["fail_after"]:
                raise KeyboardInterrupt
            state["batches"] += 1
            state["dialogues"] += input_ids.shape[0]
            return fn(model, input_ids, *args, **kwargs)
        return wrapped

    monkeypatch.setattr(words, "relevance_fn", relevance_fn)
    return state


def same(a, b):
    assert [x.id for x in a] == [x.id for x in b]
    for x, y in zip(a, b):
        assert x.words == y.words and x.spans == y.spans and x.pieces == y.pieces
        assert x.target == y.target and x.label == y.label and x.input_ids == y.input_ids
        np.testing.assert_allclose(x.relevance, y.relevance, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(x.probs, y.probs, rtol=1e-5)


def run(tiny, ds, cache=None, **kw):
    model, tok = tiny
    return words.attribute_dialogues(model, tok, ds, batch_size=2, max_length=64,
                                     progress=False, cache=cache, **kw)


def test_second_pass_reads_everything_back(tiny, tmp_path, counted):
    ds = [dialogue(i, t) for i, t in enumerate(TEXTS)]
    cache = AttributionCache.for_model(tmp_path, tiny[0])
    first = run(tiny, ds, cache)
    assert counted["dialogues"] == len(ds)
    again = run(tiny, ds, cache)
    assert counted["dialogues"] == len(ds)  # nothing recomputed
    same(first, again)
    same(first, run(tiny, ds))  # and equal to an uncached pass


def test_interrupted_pass_resumes(tiny, tmp_path, counted):
    ds = [dialogue(i, t) for i, t in enumerate(TEXTS)]
    cache = AttributionCache.for_model(tmp_path, tiny[0])
    counted["fail_after"] = 2
    with pytest.raises(KeyboardInterrupt):
        run(tiny, ds, cache)
    assert counted["dialogues"] == 4  # two batches of two were finished and stored
    counted["fail_after"] = None
    resumed = run(tiny, ds, cache)
    assert counted["dialogues"] == len(ds)  # only the missing two were computed
    same(resumed, run(tiny, ds))


def test_changed_dialogue_or_settings_are_recomputed(tiny, tmp_path, counted):
    ds = [dialogue(i, t) for i, t in enumerate(TEXTS)]
    cache = AttributionCache.for_model(tmp_path, tiny[0])
    run(tiny, ds, cache)
    edited = list(ds)
    edited[1] = replace(ds[1], turns=(ds[1].turns[0], Turn("agent", "Walk. Nothing more.")))
    relabelled = replace(ds[2], label="N" if ds[2].label != "N" else "OB")
    edited[2] = relabelled
    counted["dialogues"] = 0
    out = run(tiny, edited, cache)
    assert counted["dialogues"] == 2  # the edited text and the new label
    assert out[1].words == ["Walk", ".", "Nothing", "more", "."]
    counted["dialogues"] = 0
    run(tiny, ds, cache, target="predicted")  # another target: another store
    assert counted["dialogues"] == len(ds)


def test_fingerprint_follows_the_weights(tiny):
    from benevaudit.encoders.models import load_classifier

    model = tiny[0]
    assert model_fingerprint(model) == model_fingerprint(model)
    other = load_classifier("tiny", attn_implementation="eager", seed=6)
    assert model_fingerprint(other) != model_fingerprint(model)
    with torch.no_grad():
        other.load_state_dict(model.state_dict())
    assert model_fingerprint(other) == model_fingerprint(model)
