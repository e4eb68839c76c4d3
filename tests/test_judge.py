"""The one judge component (llm/judge.py): a model, a prompt and a reading; invalid verdicts
counted in one place; and each of its three users (the detector judges, CoBia's raters,
FairMT-Bench's judge) asking through it. Scripted models, so every verdict is known."""

import math
from types import SimpleNamespace

import pytest

from benevaudit.detectors.judges import JudgeDetector
from benevaudit.detectors.units import make_units
from benevaudit.llm import Sampling
from benevaudit.llm.judge import Judge, Reading, invalid_metrics
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.llm.spec import SamplingSpec, llm_spec
from benevaudit.llm.verdicts import Verdict
from benevaudit.probes.cobia import raters
from benevaudit.probes.fairmt import judging
from benevaudit.probes.fairmt.release import Dialogue
from benevaudit.probes.fairmt.spec import FairMTJudge
from benevaudit.schema import Dialogue as Record
from benevaudit.schema import Turn

YES_NO = {"yes": True, "no": False}.get


def item_prompt(item: tuple[str, str]) -> list[dict[str, str]]:
    context, text = item
    return [{"role": "system", "content": f"Judge against: {context}"},
            {"role": "user", "content": text}]


def test_a_text_judge_renders_each_item_parses_each_reply_and_keeps_the_invalid():
    model = ScriptedChatModel(["yes", "hmm", "no"])
    built = []
    judge = Judge("toy", lambda: built.append(1) or model, item_prompt,
                  Reading.text(YES_NO, Sampling(temperature=0.0)))
    items = [("c1", "t1"), ("c2", "t2"), ("c3", "t3")]
    assert judge.requests(items)[1] == [{"role": "system", "content": "Judge against: c2"},
                                        {"role": "user", "content": "t2"}]
    got = judge.verdicts(items, chunk=2)
    assert got == [Verdict(True, "yes"), Verdict(None, "hmm"), Verdict(False, "no")]
    assert model.chat_calls == 2 and built == [1]          # two chunks, one model built
    assert invalid_metrics("toy", [v.verdict for v in got]) == {
        "toy/invalid": 1.0, "toy/invalid_rate": pytest.approx(1 / 3)}


def test_a_judge_asked_once_per_key_sends_each_distinct_request_once():
    model = ScriptedChatModel(["yes", "no"])
    judge = Judge("toy", lambda: model, item_prompt,
                  Reading.text(YES_NO, Sampling(temperature=0.0)))
    items = [("c", "same"), ("c", "same"), ("c", "other")]
    got = judge.verdicts(items, once=True)
    assert [v.verdict for v in got] == [True, True, False]   # the copy gets the first reply
    got = judge.verdicts(items, keys=["a", "b", "a"])        # keys decide what is the same
    assert [v.verdict for v in got] == [True, False, True]


def test_a_scoring_judge_takes_the_most_probable_label_and_is_never_invalid():
    model = ScriptedChatModel(scorer=lambda c, words: [math.log(0.3), math.log(0.7)])
    judge = Judge("toy", lambda: model, item_prompt,
                  Reading.scores(["Biased", "Unbiased"], ["biased", "not_biased"]))
    [v] = judge.verdicts([("c", "t")])
    assert v.verdict == "not_biased" and v.probs == pytest.approx((0.3, 0.7))
    assert model.chat_calls == 0 and model.score_calls == 1


def test_no_items_load_no_model_and_a_judge_needs_a_reading():
    judge = Judge("toy", lambda: pytest.fail("built"), item_prompt,
                  Reading.text(YES_NO, Sampling(temperature=0.0)))
    assert judge.verdicts([]) == []
    with pytest.raises(ValueError, match="needs a parser or label words"):
        Judge("toy", ScriptedChatModel, item_prompt, Reading())
    assert math.isnan(invalid_metrics("x", [])["x/invalid_rate"])


def test_close_closes_the_model_the_judge_built_and_the_next_call_builds_anew():
    built: list[ScriptedChatModel] = []

    def build() -> ScriptedChatModel:
        built.append(ScriptedChatModel(["yes"]))
        return built[-1]

    judge = Judge("toy", build, item_prompt, Reading.text(YES_NO, Sampling(temperature=0.0)))
    judge.verdicts([("c", "t")])
    judge.close()
    judge.verdicts([("c", "t")])
    assert len(built) == 2


def test_the_detector_judge_asks_through_the_component():
    # the keys JudgeDetector reads of a judge detector's block (conf/detector/base/judge.yaml)
    spec = SimpleNamespace(name="judge_plain", strategy="plain", demographics=False,
                           mode="generate", ties="order", aggregation="any",
                           sampling=SamplingSpec.of({"temperature": 0.6, "top_p": 0.9,
                                                     "max_tokens": 50, "seed": 1}, "sampling"))
    model = ScriptedChatModel(["Label: BB", "no label here"])
    detector = JudgeDetector(spec, [("one", lambda: model)])
    dialogue = Record(id="d", label="BB", role="mental_health", generator="x",
                      user={"age": "young", "gender": "female", "race": "White",
                            "ability": "none"}, agent=None,
                      turns=[Turn("user", "hi"), Turn("agent", "hello")])
    judge = detector.judge_of("one", lambda: model)
    assert judge.reading.parse is not None and judge.reading.sampling == detector.sampling
    [first, second] = detector.judge_units(judge, make_units(dialogue, "dialogue") * 2)
    assert first.flag is True and first.probs == {"N": 0.0, "OB": 0.0, "BB": 1.0}
    assert second.flag is None and second.raw == "no label here"


@pytest.mark.parametrize("mode, variant, words", [
    ("generate", "project", ()), ("score", "project", ("Biased", "Unbiased")),
    ("score", "release", ("Biased", "Unbiased")), ("score", "granite_release", ("Yes", "No"))])
def test_each_cobia_rater_is_a_judge_with_its_reading(mode, variant, words):
    kind = "guard" if variant == "granite_release" else "bias"
    rater = raters.Rater("r", kind, llm_spec({"backend": "scripted"}), 8, mode,
                         variant, 1.0)
    reading = raters.reading(rater, seed=7)
    assert reading.words == words
    if mode == "generate":
        assert reading.parse is raters.parse_bias and reading.sampling == Sampling(
            temperature=0.0, top_p=1.0, max_tokens=8, seed=7)
    else:
        assert reading.labels == raters.LABELS[kind]


def test_cobia_ask_reads_verdicts_through_the_judge_in_chunks():
    rater = raters.Rater("bias", "bias", llm_spec({"backend": "scripted"}),
                         None, "generate", "project", 1.0)
    model = ScriptedChatModel(["Biased", "Unbiased", "maybe"])
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(5)]
    got = raters.ask(rater, model, prompts, seed=1, chunk=2)
    assert [v.verdict for v in got] == ["biased", "not_biased", None, "biased", "not_biased"]
    assert model.chat_calls == 3


def test_the_fairmt_judge_is_the_system_prompt_and_the_reply_read_by_its_first_word():
    dialogue = Dialogue(id="d1", task="Anaphora_Ambiguity", index=0,
                        turns=("a", "b", "c", "d", "e"), type="stereotype", dimension="age")
    spec = FairMTJudge.of({"llm": {"backend": "scripted"}, "temperature": 0.0, "top_p": 1.0,
                           "max_tokens": 16, "server_defaults": False}, "probe.judge")
    model = ScriptedChatModel(["**Yes**, it is.", "No.", "Yesterday"])
    judge = judging.bias_judge({"d1": "SYSTEM"}, spec, 3, lambda: model)
    items = [(dialogue, "r1"), (dialogue, "r2"), (dialogue, "r3")]
    assert judge.requests(items)[0] == [{"role": "system", "content": "SYSTEM"},
                                        {"role": "user", "content": "r1"}]
    got = judge.verdicts(items)
    assert [v.verdict for v in got] == ["biased", "not_biased", None]
    assert [judging.verdict_of(v.raw) for v in got] == ["biased", "not_biased", "invalid"]
