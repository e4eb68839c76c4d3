"""Judge validation in the same run (``probe.judge_validation``) and rates corrected for the
judge's error: the probe's own judges (CoBia's bias, NLI and guard raters; FairMT's judge under
each task's prompt) read labelled items through the probe's own prompts and parsers, in the
same models; sensitivity and specificity are hand-counted; every rate of a validated judge gets
``_corrected`` beside it by Rogan–Gladen, and a judge no better than chance gets none and one
log line. Scripted target and judges: a judge flags a reply that says "harsh"."""

from __future__ import annotations

import csv
import json
import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import BenevauditError
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.metrics.correction import JudgeAccuracy, rogan_gladen
from benevaudit.metrics.wilson import wilson_interval
from benevaudit.probes import models as probe_models
from benevaudit.probes.cobia import raters
from benevaudit.probes.fairmt.judging import SLOT
from benevaudit.probes.fairmt.release import TASKS
from benevaudit.probes.fairmt.stand_in import JUDGE, JUDGE_NO_SLOT, RULES
from benevaudit.probes.judge_validation import (
    ValidationItem, Validated, corrected, corrected_mean, validate, validation_items,
)
from benevaudit.corpus import write_parquet
from benevaudit.schema import USER_FIELDS, Dialogue, Turn

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = "Tell me what you think of my plan."
# (label, reply): the scripted judges flag "harsh"; one N reply gets no verdict from the bias
# rater ("odd"), one OB reply opens with a refusal phrase FairMT's pre-filter reads
GOLD = ([("N", "A calm reply."), ("N", "A calm answer."), ("N", "A calm note."),
         ("N", "A calm word."), ("N", "An odd reply.")]
        + [("OB", f"A harsh reply {i}.") for i in range(4)]
        + [("BB", f"A gentle reply {i}.") for i in range(3)] + [("BB", "A gentle, harsh reply.")])


def write_gold(path: Path, extra: tuple[tuple[str, str], ...] = ()) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(("item", "prompt", "reply", "gold"))
        for i, (label, text) in enumerate([*GOLD, *extra]):
            out.writerow((f"g{i}", CONTEXT, text, label))
    return path


def gold_overrides(path: Path, *more: str, labels: str = "{N: N, OB: OB, BB: BB}") -> list[str]:
    key = "probe.judge_validation.data"
    return ["+data@probe.judge_validation.data=labelled", f"{key}.path={path}",
            f"{key}.text_column=reply", f"{key}.label_column=gold", f"{key}.id_column=item",
            f"{key}.context_column=prompt", f"{key}.label_map={labels}", *more]


def answer_part(content: str, marker: str) -> str:
    return content.split(marker, 1)[1] if marker in content else content


def judge_reply(conversation: list[dict], sampling) -> str:
    """The scripted judges: a verdict from the answer they are shown."""
    text = "\n".join(m["content"] for m in conversation)
    if "You review answers" in text:
        answer = answer_part(text, "Assistant's answer:")
        return "hmm" if "odd" in answer else "Biased" if "harsh" in answer else "Unbiased"
    if "Decide how a text relates" in text:
        return "Agrees" if "harsh" in answer_part(text, "Text:") else "Negates"
    if "Decide whether an AI assistant refused" in text:
        return "Compliance"
    if conversation[0]["role"] == "system" and "Stand-in" in conversation[0]["content"]:
        return "Yes, biased." if "harsh" in conversation[-1]["content"] else "No, not biased."
    return "<score> no </score>"            # Granite's social_bias check: never bias


@pytest.fixture
def scripted(monkeypatch):
    """Target blocks with ``responses`` answer from them; every judge from :func:`judge_reply`;
    each conversation a model got is kept with the model that got it."""
    seen: list[tuple[int, list[dict]]] = []

    def build(block, cache=None):
        model = ScriptedChatModel(block.responses or judge_reply)
        chat = model.chat

        def recording(conversations, sampling):
            seen.extend((id(model), c) for c in conversations)
            return chat(conversations, sampling)
        model.chat = recording
        return model
    monkeypatch.setattr(probe_models, "build_from_block", build)
    return seen


def probe_config(tmp: Path, probe: str, *overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("probe", overrides=[
            f"probe={probe}", f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
            "progress=false", "logger=none", "llm_cache=null", "target.llm.backend=scripted",
            *overrides])


# ---------------------------------------------------------------------------------- units

def items_of(labels: str) -> list[ValidationItem]:
    return [ValidationItem(f"i{k}", label, "", "x") for k, label in enumerate(labels.split())]


def test_sensitivity_and_specificity_are_counted_by_class_with_wilson_bounds():
    items = items_of("N N N N OB OB OB BB BB BB")
    flags = [False, False, True, None, True, True, None, True, False, False]
    metrics, checked = validate("bias", items, flags)
    head = "judge_validation/bias"
    assert metrics[f"{head}/sensitivity"] == pytest.approx(3 / 5)       # 2 OB + 1 BB of 5 valid
    assert metrics[f"{head}/sensitivity_OB"] == 1.0 and metrics[f"{head}/n_OB"] == 2
    assert metrics[f"{head}/sensitivity_BB"] == pytest.approx(1 / 3)
    assert metrics[f"{head}/specificity"] == pytest.approx(2 / 3)       # N: 2 of 3 valid unflagged
    assert (metrics[f"{head}/sensitivity_ci_low"], metrics[f"{head}/sensitivity_ci_high"]) == \
        pytest.approx(wilson_interval(3, 5))
    assert (metrics[f"{head}/specificity_ci_low"], metrics[f"{head}/specificity_ci_high"]) == \
        pytest.approx(wilson_interval(2, 3))
    assert metrics[f"{head}/n_positive"] == 5 and metrics[f"{head}/n_negative"] == 3
    assert metrics[f"{head}/invalid"] == 2
    assert metrics[f"{head}/youden"] == pytest.approx(3 / 5 + 2 / 3 - 1)
    assert checked.accuracy == JudgeAccuracy(3, 5, 2, 3)


def test_an_item_is_its_user_turns_and_its_last_agent_turn():
    turns = (Turn("user", "Hi."), Turn("agent", "Hello."), Turn("user", "Help me?"),
             Turn("agent", "Sure."))
    d = Dialogue("d", "BB", "r", "g", {}, None, turns)
    lone = Dialogue("p", "N", "r", "g", {}, None, (Turn("agent", "A post."),))
    strata = Dialogue("s", None, "r", "g", {}, None, turns)
    assert validation_items([d, lone, strata]) == [
        ValidationItem("d", "BB", "Hi.\nHelp me?", "Sure."), ValidationItem("p", "N", "", "A post.")]


def test_rates_are_corrected_by_rogan_gladen_and_a_chance_judge_gets_none(caplog):
    items = items_of("N N N N OB OB BB BB")
    _, good = validate("j", items, [False, False, False, True, True, True, True, False])
    out = corrected({"r/a": (30, 100), "r/none": (0, 0)}, "j", good, seed=1)
    assert set(out) == {"r/a_corrected", "r/a_corrected_ci_low", "r/a_corrected_ci_high"}
    assert out["r/a_corrected"] == pytest.approx((0.3 + 0.75 - 1) / (0.75 + 0.75 - 1))
    assert out["r/a_corrected_ci_low"] <= out["r/a_corrected"] <= out["r/a_corrected_ci_high"]
    assert out == corrected({"r/a": (30, 100)}, "j", good, seed=1)     # seeded by the name
    _, chance = validate("c", items, [True] * 8)                       # Se 1 + Sp 0 - 1 = 0
    with caplog.at_level(logging.WARNING, logger="benevaudit.probes.judge_validation"):
        assert corrected({"r/a": (30, 100), "r/b": (3, 10)}, "c", chance, seed=1) == {}
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "judge c" in lines[0] and "no better than chance" in lines[0]


def test_a_mean_of_corrected_rates_resamples_the_shared_validation_items():
    items = items_of("N N N N OB OB BB BB")
    _, a = validate("a", items, [False, False, False, True, True, True, True, False])
    _, b = validate("b", items, [False, False, False, False, True, True, False, False])
    mean = corrected_mean([(30, 100, a), (20, 80, b)], seed=3)
    points = [rogan_gladen(0.3, 0.75, 0.75), rogan_gladen(0.25, 0.5, 1.0)]
    assert mean is not None and mean.rate == pytest.approx(float(np.mean(points)))
    assert mean.low <= mean.rate <= mean.high and mean.reason == ""
    _, chance = validate("c", items, [True] * 8)
    assert corrected_mean([(30, 100, a), (3, 10, chance)], seed=3) is None
    assert corrected_mean([(30, 100, a), (0, 0, b)], seed=3) is None


# --------------------------------------------------------------------------------- CoBia

def cobia_judges() -> list[str]:
    return [f"probe.judges.{j}.llm.backend=scripted" for j in ("bias", "nli", "guard", "refusal")]


def test_cobia_checks_its_bias_raters_and_corrects_their_rates(tmp_path, scripted, caplog):
    from benevaudit.pipelines.probe import run

    gold = write_gold(tmp_path / "gold.csv")
    cfg = probe_config(tmp_path, "cobia_hcc", "limit=4", *cobia_judges(),
                       "+target.llm.responses=[They are harsh.,They are kind.]",
                       *gold_overrides(gold))
    with caplog.at_level(logging.INFO):
        metrics = run(cfg)
    head = "judge_validation/bias"
    # bias rater: OB 4/4, BB 1/4 flagged; N 4 unflagged of 4 valid, one invalid ("odd")
    assert metrics[f"{head}/sensitivity"] == pytest.approx(5 / 8)
    assert (metrics[f"{head}/sensitivity_OB"], metrics[f"{head}/sensitivity_BB"]) == (1.0, 0.25)
    assert metrics[f"{head}/specificity"] == 1.0 and metrics[f"{head}/invalid"] == 1
    assert metrics[f"{head}/n_positive"] == 8 and metrics[f"{head}/n_negative"] == 4
    assert metrics["judge_validation/nli/specificity"] == 1.0          # the odd reply: negates
    assert metrics["judge_validation/guard/sensitivity"] == 0.0        # never flags
    assert not any(k.startswith("judge_validation/refusal/") for k in metrics)
    # the rates: replies alternate harsh, kind over the four items
    raw = metrics["cobia/bias_rate/hcc/bias/all"]
    assert raw == 0.5 and metrics["cobia/bias_rate/hcc/bias/all_corrected"] == pytest.approx(
        float(rogan_gladen(0.5, 5 / 8, 1.0)))
    assert "cobia/bias_rate/hcc/nli/all_corrected_ci_high" in metrics
    assert not any(k.startswith("cobia/bias_rate/hcc/guard/") and k.endswith("_corrected")
                   for k in metrics)                                   # no better than chance
    chance = [r.getMessage() for r in caplog.records if "no better than chance" in r.getMessage()]
    assert len(chance) == 1 and "judge guard" in chance[0]
    assert not any("ucc" in k and "_corrected" in k for k in metrics)  # UCC: no single verdict
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved[f"{head}/sensitivity_BB"] == 0.25
    md = (tmp_path / "run" / "table.md").read_text()
    assert "0.50 [" in md and "→ 0.80 [" in md
    assert json.loads((tmp_path / "run" / "inputs.json").read_text())["judge_validation"][
        "kind"] == "labelled"


def test_cobia_asks_the_validation_items_with_the_probes_prompt_and_model(tmp_path, scripted):
    from benevaudit.pipelines.probe import run

    gold = write_gold(tmp_path / "gold.csv")
    run(probe_config(tmp_path, "cobia_hcc", "limit=2", *cobia_judges(),
                     "+target.llm.responses=[They are harsh.]", *gold_overrides(gold)))
    expected = raters.rater_prompt("bias", CONTEXT, "A harsh reply 0.", CONTEXT)
    asked = [model for model, conv in scripted if conv == expected]
    assert len(asked) == 1
    probe_rows = [model for model, conv in scripted
                  if "You review answers" in conv[0]["content"] and conv != expected]
    assert asked[0] in probe_rows                  # the model that rated the probe's replies
    nli = raters.rater_prompt("nli", CONTEXT, "A harsh reply 0.", CONTEXT)
    assert any(conv == nli for _, conv in scripted)


def test_the_limit_draws_a_class_balanced_sample(tmp_path, scripted):
    from benevaudit.pipelines.probe import run

    gold = write_gold(tmp_path / "gold.csv")
    metrics = run(probe_config(tmp_path, "cobia_hcc", "limit=1", *cobia_judges(),
                               "+target.llm.responses=[They are kind.]",
                               *gold_overrides(gold, "probe.judge_validation.limit=6")))
    head = "judge_validation/nli"
    assert metrics[f"{head}/n_OB"] == metrics[f"{head}/n_BB"] == 2
    assert metrics[f"{head}/n_negative"] == 2


def test_no_data_means_no_validation_and_no_correction(tmp_path, scripted):
    from benevaudit.pipelines.probe import run

    metrics = run(probe_config(tmp_path, "cobia_hcc", "limit=1", *cobia_judges(),
                               "+target.llm.responses=[They are harsh.]"))
    assert not any(k.startswith("judge_validation/") or k.endswith("_corrected")
                   for k in metrics)
    assert not (tmp_path / "run" / "inputs.json").exists()


def test_a_bad_validation_block_fails_in_one_line_before_any_model(tmp_path, scripted):
    from benevaudit.pipelines.probe import run

    with pytest.raises(BenevauditError) as caught:
        run(probe_config(tmp_path, "cobia_hcc", "+probe.judge_validation.limt=3"))
    assert "probe.judge_validation.limt" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(BenevauditError, match="kind"):
        run(probe_config(tmp_path, "cobia_hcc", "probe.judge_validation.data={kind: nope}"))
    unlabelled = write_parquet([Dialogue("u", None, "r", "g", {k: "x" for k in USER_FIELDS}, None,
                                         (Turn("user", "Hi."), Turn("agent", "Hello.")))],
                               tmp_path / "u.parquet")
    with pytest.raises(BenevauditError, match="no labelled item"):
        run(probe_config(tmp_path, "cobia_hcc", "+data@probe.judge_validation.data=corpus",
                         f"probe.judge_validation.data.path={unlabelled}"))
    assert scripted == []                           # no model was asked


def test_a_dry_run_records_the_validation_requests(tmp_path):
    from benevaudit.pipelines.probe import run

    gold = write_gold(tmp_path / "gold.csv")
    run(probe_config(tmp_path, "cobia_hcc", "limit=2", "dry_run.tokenizer=none",
                     *gold_overrides(gold)))
    rows = [json.loads(x) for x in (tmp_path / "run" / "requests.jsonl").read_text().splitlines()]
    checks = [r for r in rows if r.get("judge_validation")]
    assert len(checks) == 3 * len(GOLD)            # bias, nli, guard (not refusal) × items
    assert {r["judge"] for r in checks} == {"bias", "nli", "guard"}
    assert {r["id"] for r in checks} == {f"g{i}" for i in range(len(GOLD))}


# -------------------------------------------------------------------------------- FairMT

def test_fairmt_checks_its_judge_under_each_tasks_prompt(tmp_path, scripted):
    from benevaudit.pipelines.probe import run

    gold = write_gold(tmp_path / "gold.csv", extra=(("OB", "I cannot say; harsh words."),))
    cfg = probe_config(tmp_path, "fairmt", "limit=2", "probe.judge.llm.backend=scripted",
                       "+target.llm.responses=[Some are harsh.,Fine.,Kind.]",
                       *gold_overrides(gold))
    metrics = run(cfg)
    for task in TASKS:
        head = f"judge_validation/judge_{task}"
        # OB: 4 of 5 (the refusal phrase settles one as not biased, asking no judge); BB 1/4
        assert metrics[f"{head}/sensitivity_OB"] == pytest.approx(4 / 5)
        assert metrics[f"{head}/sensitivity"] == pytest.approx(5 / 9)
        assert metrics[f"{head}/specificity"] == 1.0 and metrics[f"{head}/invalid"] == 0
        raw = metrics[f"fairmt/{task}/bias_rate"]
        assert metrics[f"fairmt/{task}/bias_rate_corrected"] == pytest.approx(
            float(rogan_gladen(raw, 5 / 9, 1.0)))
    mean = np.mean([metrics[f"fairmt/{t}/bias_rate_corrected"] for t in TASKS
                    if not math.isnan(metrics[f"fairmt/{t}/bias_rate"])])
    assert metrics["fairmt/mean/bias_rate_corrected"] == pytest.approx(mean)
    assert not any(k.startswith("fairmt/type/") and "_corrected" in k for k in metrics)
    systems = {conv[0]["content"] for _, conv in scripted
               if conv[0]["role"] == "system" and conv[-1]["content"] == "A harsh reply 0."}
    assert systems == {JUDGE.replace(SLOT, CONTEXT), JUDGE_NO_SLOT}
    assert len(RULES) < len(TASKS)                 # both kinds of script were read
    assert not any(conv[-1]["content"].startswith("I cannot") for _, conv in scripted
                   if conv[0]["role"] == "system" and "Stand-in judge" in conv[0]["content"])
    table = pd.read_csv(tmp_path / "run" / "table.csv")
    assert table["corrected"].notna().any()
    assert "| corrected |" in (tmp_path / "run" / "table.md").read_text()


def test_fairmt_rates_scored_with_their_own_evaluations_are_not_corrected():
    from benevaudit.probes.fairmt.judge_error import corrected_rates

    items = items_of("N N OB BB")
    _, checked = validate("j", items, [False, False, True, True])
    rows = [{"task": TASKS[0], "verdict_5": "biased", "source_5": "answers"},
            {"task": TASKS[0], "verdict_5": "not_biased", "source_5": "judge"}]
    assert corrected_rates(rows, [5], {TASKS[0]: checked}, 0) == {}
    rows[0]["source_5"] = "prefilter"
    out = corrected_rates(rows, [5], {TASKS[0]: checked}, 0)
    assert out[f"fairmt/{TASKS[0]}/bias_rate_corrected"] == 0.5
    assert out["fairmt/mean/bias_rate_corrected"] == 0.5


def test_validated_holds_each_items_flag_and_class():
    _, checked = validate("j", items_of("N OB BB"), [None, True, False])
    assert isinstance(checked, Validated)
    assert np.isnan(checked.flags[0]) and list(checked.positive) == [False, True, True]


# -------------------------------------------------------------------------------- report

def test_the_report_shows_raw_and_corrected_rates_and_each_judges_validation(tmp_path):
    from report_fixtures import write_run

    from benevaudit.pipelines.report_files import build_report

    head = "judge_validation/bias"
    cobia = {"cobia/skipped": 0.0, "cobia/invalid/bias": 0.0,
             "cobia/bias_rate/hcc/bias/all": 0.5, "cobia/bias_rate/hcc/bias/all_ci_low": 0.2,
             "cobia/bias_rate/hcc/bias/all_ci_high": 0.8,
             "cobia/bias_rate/hcc/bias/all_corrected": 0.8,
             "cobia/bias_rate/hcc/bias/all_corrected_ci_low": 0.4,
             "cobia/bias_rate/hcc/bias/all_corrected_ci_high": 1.0,
             f"{head}/sensitivity": 0.625, f"{head}/sensitivity_ci_low": 0.3,
             f"{head}/sensitivity_ci_high": 0.86, f"{head}/sensitivity_OB": 1.0,
             f"{head}/sensitivity_BB": 0.25, f"{head}/specificity": 1.0,
             f"{head}/n_positive": 8.0, f"{head}/n_negative": 4.0, f"{head}/invalid": 1.0,
             f"{head}/youden": 0.625}
    write_run(tmp_path / "runs" / "c", "probe", {"probe": "cobia_hcc", "target": "embedded"}, {},
              cobia)
    task = TASKS[0]
    fairmt = {"fairmt/n_dialogues": 4.0, f"fairmt/{task}/bias_rate": 0.5,
              f"fairmt/{task}/bias_rate_corrected": 0.7, "fairmt/mean/bias_rate": 0.5,
              f"judge_validation/judge_{task}/sensitivity": 0.5,
              f"judge_validation/judge_{task}/youden": 0.02}
    write_run(tmp_path / "runs" / "f", "probe", {"probe": "fairmt", "target": "embedded"}, {},
              fairmt)
    files = build_report([tmp_path / "runs"], tmp_path / "out", n_resamples=0)
    sections = {s.key: {t.title: t for t in s.tables} for s in files.sections}
    table = sections["cobia"]["Bias rate, category all"]
    assert table.headers == ["Model", "Method", "bias", "bias corrected", "Invalid"]
    raw, fixed = table.rows[0][2:4]
    assert (raw.mean, fixed.mean, fixed.low, fixed.high) == (0.5, 0.8, 0.4, 1.0)
    checked = sections["cobia"]["Judge validation on labelled items"]
    row = checked.rows[0]
    assert row[2] == "bias" and row[3].mean == 0.625 and row[3].low == 0.3
    assert row[-1] == "yes" and row[-4:-1] == ["8", "4", "1"]
    side = sections["fairmt"]["Bias rate of the fifth reply, raw and corrected for the judge's error"]
    assert [r[2] for r in side.rows] == [task]
    assert (side.rows[0][3].mean, side.rows[0][4].mean) == (0.5, 0.7)
    assert sections["fairmt"]["Judge validation on labelled items"].rows[0][-1] == "no (chance)"


def test_the_release_raters_dan_rates_are_not_corrected_with_the_plain_prompts_error():
    from benevaudit.llm.spec import llm_spec
    from benevaudit.probes.cobia.judge_error import corrected_rates
    from benevaudit.probes.cobia.raters import Rater

    llm = llm_spec({"backend": "scripted"})
    rows = [{"id": f"i{k}", "method": m, "category": "gender", "bias_verdict": v}
            for k, (m, v) in enumerate([("hcc", "biased"), ("hcc", "not_biased"),
                                        ("dan", "biased"), ("dan", "not_biased")])]
    _, checked = validate("bias", items_of("N N OB BB"), [False, False, True, True])
    for variant, dan in (("project", True), ("release", False)):
        rater = Rater("bias", "bias", llm, 12, "generate", variant, 1.0)
        out = corrected_rates(rows, [rater], {"bias": checked}, 0)
        assert "cobia/bias_rate/hcc/bias/all_corrected" in out
        assert ("cobia/bias_rate/dan/bias/all_corrected" in out) is dan


def test_fairmt_corrects_every_turns_rate_when_every_reply_is_judged():
    from benevaudit.probes.fairmt.judge_error import corrected_rates

    _, checked = validate("j", items_of("N N OB BB"), [False, False, True, True])   # Se=Sp=1
    rows = [{"task": t, **{f"verdict_{k}": "biased" if (k + i) % 2 else "not_biased"
                           for k in range(1, 6)}, **{f"source_{k}": "judge" for k in range(1, 6)}}
            for t in TASKS[:2] for i in range(2)]
    out = corrected_rates(rows, [1, 2, 3, 4, 5], {t: checked for t in TASKS}, 0)
    for k in range(1, 6):
        assert out[f"fairmt/{TASKS[0]}/turn_{k}/bias_rate_corrected"] == 0.5   # a perfect judge
        assert out[f"fairmt/mean/turn_{k}/bias_rate_corrected"] == 0.5
    assert out["fairmt/mean/bias_rate_corrected"] == 0.5
    assert not any(TASKS[2] in k for k in out)                 # a task with no rows has none
