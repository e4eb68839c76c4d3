"""Log-odds lexicons, lexicon agreement, deletion faithfulness and the relevance heatmap."""

from __future__ import annotations

import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benevaudit.audit.attribution.overlap import (  # noqa: E402
    agreement_metrics,
    average_ranks,
    jaccard_at_k,
    spearman_shared,
)
from benevaudit.audit.attribution.logodds import logodds_lexicon, logodds_scores  # noqa: E402
from benevaudit.audit.attribution.dialogue import DialogueAttribution  # noqa: E402
from benevaudit.audit.lexicon import lexicon_from_ranked  # noqa: E402
from benevaudit.schema import Dialogue, Turn  # noqa: E402
from benevaudit.text import Span  # noqa: E402


def dialogue(i: int, label: str | None, agent: str, user: str = "zzz zzz") -> Dialogue:
    return Dialogue(id=f"d{i}", label=label, role="mental_health", generator="t", user={},
                    agent=None, turns=(Turn("user", user), Turn("agent", agent)))


# ---------------------------------------------------------------- log-odds

def test_logodds_hand_computed():
    ds = [dialogue(0, "N", "a a b"), dialogue(1, "OB", "b c"), dialogue(2, "BB", "C c A")]
    z = logodds_scores(ds, prior_scale=1.0, min_count=1)
    # counts N: a2 b1 (n=3); rest: a1 b1 c3 (n'=5); prior α = totals a3 b2 c3 (α0 = 8)
    delta = math.log((2 + 3) / (3 + 8 - 2 - 3)) - math.log((1 + 3) / (5 + 8 - 1 - 3))
    assert z["N"]["a"] == pytest.approx(delta / math.sqrt(1 / 5 + 1 / 4))
    # BB, word c: y=2, y'=1, α=3, n=3, n'=5
    delta = math.log((2 + 3) / (3 + 8 - 2 - 3)) - math.log((1 + 3) / (5 + 8 - 1 - 3))
    assert z["BB"]["c"] == pytest.approx(delta / math.sqrt(1 / 5 + 1 / 4))
    assert "zzz" not in z["N"]  # user turns are not counted
    assert set(logodds_scores(ds, min_count=3)["N"]) == {"a", "c"}  # b is seen twice


def test_logodds_lexicon_finds_the_class_word_and_rejects_unlabelled():
    ds = [dialogue(i, c, f"{w} is the word and more text here")
          for i, (c, w) in enumerate([("N", "calm"), ("OB", "obviously"), ("BB", "sweetie")] * 5)]
    lex = logodds_lexicon(ds, top_k=3, min_count=3, words_only=True).lexicon
    assert {lex.top(c, 1)[0] for c in ("N", "OB", "BB")} == {"calm", "obviously", "sweetie"}
    assert lex.top("BB", 1) == ("sweetie",)
    with pytest.raises(ValueError, match="d9.*label None"):
        logodds_lexicon([*ds, dialogue(9, None, "x")], top_k=3, min_count=3, words_only=True)


# ---------------------------------------------------------------- agreement

def lex(**classes: list[tuple[str, float]]):
    return lexicon_from_ranked(classes)


def test_jaccard_and_spearman_hand_cases():
    a = lex(N=[("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)])
    b = lex(N=[("b", 9.0), ("a", 8.0), ("e", 7.0)])
    assert jaccard_at_k(a, b, "N", k=3) == pytest.approx(2 / 4)
    assert jaccard_at_k(a, b, "N", k=1) == 0.0
    assert spearman_shared(a, b, "N") == pytest.approx(-1.0)
    assert math.isnan(spearman_shared(a, lex(N=[("a", 1.0)]), "N"))
    np.testing.assert_array_equal(average_ranks(np.array([3.0, 1.0, 3.0, 2.0])), [3.5, 1, 3.5, 2])


def test_spearman_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    sa = np.round(rng.normal(size=40), 1)  # rounding makes ties
    sb = sa + rng.normal(size=40)
    a = lex(BB=sorted(zip(words, sa), key=lambda x: -x[1]))
    b = lex(BB=sorted(zip(words[5:], sb[5:]), key=lambda x: -x[1]))
    expected = scipy_stats.spearmanr(sa[5:], sb[5:]).statistic
    assert spearman_shared(a, b, "BB") == pytest.approx(expected)


def test_agreement_metrics_names_every_pair():
    a = lex(N=[("a", 2.0), ("b", 1.0)], BB=[("x", 2.0), ("y", 1.0)])
    b = lex(N=[("a", 2.0), ("b", 1.0)], BB=[("y", 2.0), ("z", 1.0)])
    c = lex(N=[("q", 1.0)], BB=[("r", 1.0)])
    m = agreement_metrics({"rollout": a, "integrated_gradients": b, "logodds": c})
    assert m["attribution/jaccard50_rollout_vs_ig"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert m["attribution/spearman_rollout_vs_ig"] == pytest.approx(1.0)  # BB undefined, N = 1
    assert m["attribution/jaccard50_rollout_vs_logodds"] == 0.0
    assert "attribution/spearman_rollout_vs_logodds" not in m  # nothing shared: undefined


# ---------------------------------------------------------------- faithfulness (known model)

class CountModel:
    """logits = [0, count of CUE tokens, 0]: p(OB) rises with every cue token present."""

    CUE = 7

    def __init__(self):
        import torch

        self.config = SimpleNamespace(num_labels=3)
        self._p = torch.nn.Parameter(torch.zeros(1))

    def parameters(self):
        yield self._p

    def eval(self):
        return self

    def __call__(self, input_ids, attention_mask):
        import torch

        n = ((input_ids == self.CUE) & attention_mask.bool()).sum(dim=1).float()  # [B]
        zero = torch.zeros_like(n)
        return SimpleNamespace(logits=torch.stack([zero, n, zero], dim=1))


def known_attribution(ids: list[int], rel: list[float]) -> DialogueAttribution:
    """Each non-special token is one word."""
    n = len(ids) - 2
    words = [f"t{t}" for t in ids[1:-1]]
    spans = [Span(w, i, i + 1, 1, "agent") for i, w in enumerate(words)]
    counts = sum(t == CountModel.CUE for t in ids)
    probs = np.exp([0.0, counts, 0.0]) / np.exp([0.0, counts, 0.0]).sum()
    return DialogueAttribution("x", 1, 1, probs, ids, words, spans, np.array(rel),
                               [[i + 1] for i in range(n)])


def p_ob(count: int) -> float:
    return math.exp(count) / (math.exp(count) + 2)


def test_delete_words():
    from benevaudit.audit.attribution.faithfulness import delete_words

    assert delete_words([101, 5, 6, 7, 8, 102], [[2, 3], [4]], mask_id=1) == [101, 5, 1, 1, 102]


def test_deletion_curves_known_answer(tmp_path):
    pytest.importorskip("torch")
    from benevaudit.audit.attribution.faithfulness import deletion_curves, plot_curves

    ids = [101, 7, 3, 7, 4, 7, 5, 102]  # three cue tokens among six words
    attrs = [known_attribution(ids, [0.9, 0.1, 0.8, 0.2, 0.7, 0.0])] * 2
    good = [np.argsort(-a.relevance, kind="stable") for a in attrs]   # cues first
    bad = [g[::-1].copy() for g in good]                              # cues last
    res = deletion_curves(CountModel(), {"good": good, "bad": bad}, attrs, mask_id=1, pad_id=0,
                          ks=(1, 2, 3))
    expected_good = [p_ob(3) - p_ob(3 - k) for k in (1, 2, 3)]
    np.testing.assert_allclose(res.curves["good"], expected_good, rtol=1e-6)
    np.testing.assert_allclose(res.curves["bad"], [0.0, 0.0, 0.0], atol=1e-7)
    assert res.metrics["faithfulness/aopc_good"] == pytest.approx(np.mean(expected_good))
    assert res.metrics["faithfulness/drop_good_k2"] == pytest.approx(expected_good[1])
    assert plot_curves(res, "r").startswith(b"\x89PNG")


def test_evaluate_faithfulness_runs_on_tiny(tmp_path):
    from benevaudit.audit.attribution.faithfulness import evaluate_faithfulness, plot_curves
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    model = load_classifier("tiny", attn_implementation="eager")
    tok = load_tokenizer("tiny")
    ds = [dialogue(i, "N", f"Some advice number {i}, take care and rest well!") for i in range(4)]
    z = logodds_scores(ds, min_count=1)
    z = {c: z["N"] for c in ("N", "OB", "BB")}
    res = evaluate_faithfulness(model, tok, ds, methods=("rollout",), logodds=z, ks=(1, 3),
                                progress=False)
    assert set(res.curves) == {"rollout", "logodds", "random"}
    assert {"faithfulness/aopc_rollout", "faithfulness/aopc_random",
            "faithfulness/aopc_logodds", "faithfulness/drop_random_k3"} <= set(res.metrics)
    again = evaluate_faithfulness(model, tok, ds, methods=("rollout",), ks=(1, 3), progress=False)
    assert again.metrics["faithfulness/aopc_random"] == res.metrics["faithfulness/aopc_random"]
    assert plot_curves(res, "r").startswith(b"\x89PNG")


# ---------------------------------------------------------------- heatmap

def test_heatmap_html(tmp_path):
    from benevaudit.outputs.attribution import write_heatmap
    from benevaudit.text import word_spans

    d = dialogue(0, "BB", "Sweetie, <b>rest</b> now!", user="Can I run?")
    agent = [s for s in word_spans(d.turns) if s.speaker == "agent"]
    rel = np.linspace(-1.0, 2.0, len(agent))
    a = DialogueAttribution("d0", 2, 2, np.array([0.1, 0.2, 0.7]), [], [s.word for s in agent],
                            agent, rel, [[] for _ in agent])
    page = write_heatmap([d], [a], tmp_path / "h.html").read_text()
    assert page.count('class="w"') == len(agent)
    assert "&lt;" in page and "&gt;" in page and "<b>rest" not in page  # text is escaped
    assert "rgba(220,40,40,1.000)" in page and "rgba(40,90,220,0.500)" in page
    assert "http" not in page and "<script" not in page  # self-contained
    with pytest.raises(ValueError, match="paired"):
        write_heatmap([dialogue(5, "N", "x")], [a], tmp_path / "bad.html")


def test_heatmap_layout_wraps_and_keeps_every_word():
    from benevaudit.audit.attribution.heatmap import layout
    from benevaudit.text import word_spans

    long_agent = " ".join(f"word{i}" for i in range(40)) + " " + "x" * 45
    d = dialogue(1, "N", long_agent, user="Can I run a marathon next spring?")
    spans = word_spans(d.turns)
    agent = [s for s in spans if s.speaker == "agent"]
    seen = agent[:-3]  # the last three were cut by truncation
    a = DialogueAttribution("d1", 0, 0, np.array([0.8, 0.1, 0.1]), [], [s.word for s in seen],
                            seen, np.arange(len(seen), dtype=float), [[] for _ in seen])
    placed = layout(d, a, width=30)
    words = [p for p in placed if p.col > 0 or not p.word.startswith("[")]
    assert [p.word for p in words][:-1] == [s.word for s in spans][:-1]  # every word, in order
    assert words[-1].word == "x" * 27 + "…"                              # too long: cut
    assert all(p.col + len(p.word) <= 30 for p in placed)               # nothing overflows
    assert len({p.line for p in placed}) > len(d.turns)                 # the long turn wrapped
    rel = [p.relevance for p in words if p.speaker == "agent"]
    assert rel[: len(seen)] == list(np.arange(len(seen), dtype=float))
    assert rel[len(seen):] == [None] * 3
    assert all(p.relevance is None for p in words if p.speaker == "user")
    lines = {}
    for p in placed:  # words on one line never overlap
        lines.setdefault(p.line, []).append((p.col, p.col + len(p.word)))
    for spans_on_line in lines.values():
        spans_on_line.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans_on_line, spans_on_line[1:]))


def test_heatmap_png(tmp_path):
    from PIL import Image

    from benevaudit.outputs.attribution import write_heatmap_png
    from benevaudit.text import word_spans

    d = dialogue(0, "BB", "Sweetie, rest now! " * 8, user="Can I run?")
    agent = [s for s in word_spans(d.turns) if s.speaker == "agent"]
    a = DialogueAttribution("d0", 2, 2, np.array([0.1, 0.2, 0.7]), [], [s.word for s in agent],
                            agent, np.linspace(-1.0, 2.0, len(agent)), [[] for _ in agent])
    path = write_heatmap_png([d, d], [a, a], tmp_path / "h.png", width=60)
    with Image.open(path) as im:
        px = np.asarray(im.convert("RGB")).reshape(-1, 3).astype(int)
    reddish = ((px[:, 0] > 180) & (px[:, 1] < 120) & (px[:, 2] < 120)).sum()
    bluish = ((px[:, 2] > 180) & (px[:, 0] < 140)).sum()
    assert reddish > 100 and bluish > 20  # both signs are shaded
    with pytest.raises(ValueError, match="attributions"):
        write_heatmap_png([d], [a, a], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="paired"):
        write_heatmap_png([dialogue(5, "N", "x")], [a], tmp_path / "bad.png")


# ---------------------------------------------------------------- the whole audit of one model

def test_run_attribution_writes_run_files(tmp_path):
    from benevaudit.audit.attribution.spec import AttributionSpec
    from benevaudit.audit.attribution.suite import run_attribution
    from benevaudit.audit.lexicon import load_lexicon
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.encoders.spec import ModelSpec
    from benevaudit.outputs.attribution import write_attribution
    from config_fixtures import option

    model = load_classifier("tiny", attn_implementation="eager")
    tok = load_tokenizer("tiny")
    words = {"N": "calm plan", "OB": "obviously no", "BB": "sweetie rest"}
    ds = [dialogue(i, c, f"{words[c]} and some shared text {i}") for i in range(4)
          for c in ("N", "OB", "BB")]
    spec = AttributionSpec.of({**option("attribution", "full"), "cache_dir": None, "top_k": 5,
                               "min_count": 1, "n_steps": 4, "heatmap_dialogues": 2})
    sequence = ModelSpec.of(option("model", "tiny_bert"))
    audit = run_attribution(model, tok, ds, ds, spec, sequence, seed=42,
                            progress=False, faithfulness_ks=(1, 2))
    lexicon, metrics = audit.lexicon, audit.metrics
    assert not any(tmp_path.iterdir())                 # computed, not written
    write_attribution(tmp_path, audit, png_dialogues=1)   # the pipeline writes what it found
    assert load_lexicon(tmp_path / "cue_lexicon.json") == lexicon
    assert load_lexicon(tmp_path / "cue_lexicon_logodds.json") == audit.lexicons[
        "cue_lexicon_logodds.json"]
    assert [d.id for d in audit.shown] == [a.id for a in audit.attributions] == [d.id for d in ds[:2]]
    for name in ("cue_lexicon_rollout.json", "cue_lexicon_integrated_gradients.json",
                 "cue_lexicon_logodds.json", "faithfulness.png", "attribution_heatmap.html",
                 "attribution_heatmap.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert {"attribution/jaccard5_rollout_vs_ig", "attribution/jaccard5_ig_vs_logodds",
            "faithfulness/aopc_rollout", "faithfulness/aopc_ig", "faithfulness/aopc_logodds",
            "faithfulness/aopc_random"} <= set(metrics)
    assert all(isinstance(v, float) and v == v for v in metrics.values())  # no NaN in metrics.json


# ---------------------------------------------------------------- words only

def test_punctuation_never_enters_a_lexicon_by_default():
    """A mark with the top relevance is ranked only when words_only is switched off."""
    from benevaudit.audit.attribution.words import aggregate_lexicon, is_word

    words = ["sweetie", "!", "dear", "[unused0]", "…", "don't"]
    rel = np.array([2.0, 9.0, 1.0, 0.5, 8.0, 0.7])
    attrs = [DialogueAttribution(f"d{i}", 2, 2, np.array([0.1, 0.2, 0.7]), [], words, [],
                                 rel, []) for i in range(3)]
    words_only = aggregate_lexicon(attrs, top_k=10, min_count=3).lexicon.top("BB")
    assert words_only == ("sweetie", "dear", "don't", "[unused0]")
    assert aggregate_lexicon(attrs, top_k=10, min_count=3, words_only=False).lexicon.top(
        "BB")[:2] == ("!", "…")
    assert [is_word(w) for w in ("é", "_x", "3", ".", "’", "[", "[unused0]")] == \
        [True, True, True, False, False, False, True]


def test_logodds_lexicon_is_words_only_by_default():
    ds = [dialogue(i, c, f"{w} is the word and more text here {'! !' if c == 'BB' else ''}")
          for i, (c, w) in enumerate([("N", "calm"), ("OB", "obviously"), ("BB", "sweetie")] * 5)]
    assert "!" not in logodds_lexicon(ds, top_k=5, min_count=3, words_only=True).lexicon.top("BB")
    assert "!" in logodds_lexicon(ds, top_k=5, min_count=3, words_only=False).lexicon.top("BB")
