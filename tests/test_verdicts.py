"""The one verdict reader (llm/verdicts.py): label scores and parsed text, known answers."""

import math

import numpy as np
import pytest

from benevaudit.llm import Sampling
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.llm.verdicts import Verdict, count_invalid, read_scores, read_text, softmax_rows


def conv(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_read_scores_softmax_argmax_and_raw_scores():
    # log-probabilities ln(0.2), ln(0.6): normalised over the two they are 0.25 and 0.75
    logp = {"first": [math.log(0.2), math.log(0.6)], "second": [math.log(0.9), math.log(0.1)]}
    model = ScriptedChatModel(scorer=lambda c, words: logp[c[0]["content"]])
    got = read_scores(model, [conv("first"), conv("second")], ["Biased", "Unbiased"],
                      ["biased", "not_biased"])
    assert [v.verdict for v in got] == ["not_biased", "biased"]
    assert got[0].probs == pytest.approx((0.25, 0.75)) and got[1].probs == pytest.approx((0.9, 0.1))
    assert got[0].raw == '{"Biased": -1.6094, "Unbiased": -0.5108}'  # ln 0.2, ln 0.6 to 4 places
    assert count_invalid(got) == 0 and model.score_calls == 1


def test_read_scores_labels_default_to_the_words_and_must_match_them():
    model = ScriptedChatModel(scorer=lambda c, words: [0.0, -1.0, -2.0])
    assert read_scores(model, [conv("x")], ["N", "OB", "BB"])[0].verdict == "N"
    with pytest.raises(ValueError, match="3 scored words for 2 labels"):
        read_scores(model, [conv("x")], ["N", "OB", "BB"], ["a", "b"])
    assert read_scores(model, [], ["N", "OB", "BB"]) == [] and model.score_calls == 1


def test_read_text_keeps_raw_and_counts_invalid():
    model = ScriptedChatModel(["Verdict: yes", "no idea", "Verdict: no"])
    parse = {"Verdict: yes": True, "Verdict: no": False}.get
    got = read_text(model, [conv("a"), conv("b"), conv("c")], Sampling(temperature=0.0), parse)
    assert got == [Verdict(True, "Verdict: yes"), Verdict(None, "no idea"),
                   Verdict(False, "Verdict: no")]
    assert [v.valid for v in got] == [True, False, True]  # False is a verdict, None is not
    assert count_invalid(got) == 1


def test_softmax_rows_is_shift_invariant_and_sums_to_one():
    logp = np.array([[1000.0, 999.0], [-3.0, -3.0]])
    p = softmax_rows(logp)
    assert p.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert p[0, 0] == pytest.approx(1 / (1 + math.exp(-1))) and p[1, 0] == pytest.approx(0.5)
