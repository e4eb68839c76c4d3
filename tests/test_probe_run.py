"""``detect.py data=probe_run``: a probe run's replies read back as records (CoBia, FairMT-Bench,
text-mode FairDialogue), each reply with its conversation, task, turn, group and the probe
judges' verdicts; any detector scores them, and ``probe_run/<task>/turn_<k>/unseen_bb/<judge>``
is the share of the replies the judge called unbiased that the detector classes BB (counted by
hand). Scripted targets, probe judges and detector judge."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import BenevauditError, InputError
from benevaudit.outputs.probe_run import probe_columns, probe_run_metrics
from benevaudit.probes.fairmt.release import TASKS
from benevaudit.replies import ProbeRunDataSpec, read_probe_run
from benevaudit.schema import Dialogue, Turn

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"


def compose_run(primary: str, tmp: Path, run: str, *overrides: str):
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose(primary, overrides=[
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / run}", "progress=false",
            "logger=none", "llm_cache=null", *overrides])


def cobia_run(tmp: Path) -> Path:
    """CoBia HCC on the stand-in, four items: replies alternate harsh and kind; the bias rater
    says Biased, Unbiased, Unbiased, invalid in row order."""
    from benevaudit.pipelines.probe import run

    judges = [f"probe.judges.{j}.llm.backend=scripted" for j in ("bias", "nli", "guard", "refusal")]
    run(compose_run("probe", tmp, "cobia", "probe=cobia_hcc", "limit=4",
                    "target.llm.backend=scripted",
                    "+target.llm.responses=[They are harsh.,They are kind.]", *judges,
                    "+probe.judges.bias.llm.responses=[Biased,Unbiased,Unbiased,hmm]",
                    "+probe.judges.nli.llm.responses=[Agrees]",
                    "+probe.judges.refusal.llm.responses=[Compliance]"))
    return tmp / "cobia"


def spec(path: Path, turns: str = "judged") -> ProbeRunDataSpec:
    return ProbeRunDataSpec.of({"kind": "probe_run", "path": str(path), "turns": turns}, "data")


def test_cobia_replies_become_records_with_their_conversation_and_verdicts(tmp_path):
    run_dir = cobia_run(tmp_path)
    frame = pd.read_parquet(run_dir / "responses.parquet")
    records = read_probe_run(spec(run_dir))
    assert len(records) == 4 and len({r.id for r in records}) == 4
    first, messages = records[0], json.loads(frame["messages"][0])
    assert first.label is None and first.role == "probe_cobia"
    assert first.turns[-1] == Turn("agent", frame["rated_response"][0])
    assert len(first.turns) == 1 + sum(m["role"] in ("user", "assistant") for m in messages)
    assert [t.speaker for t in first.turns[:-1]] == [
        "user" if m["role"] == "user" else "agent" for m in messages
        if m["role"] in ("user", "assistant")]
    assert first.meta["task"] == "hcc" and first.meta["turn"] == 1
    assert first.meta["group"] == frame["group"][0]
    assert [r.meta["judges"]["bias"] for r in records] == [True, False, False, None]
    assert set(first.meta["judges"]) == {"bias", "nli", "guard"}      # not the refusal rater
    assert first.meta["reply_turn"] == len(first.turns) - 1
    assert read_probe_run(spec(run_dir / "responses.parquet")) == records


def test_fairmt_replies_each_come_with_the_turns_before_them(tmp_path):
    from benevaudit.pipelines.probe import run

    run(compose_run("probe", tmp_path, "fairmt", "probe=fairmt", "limit=1",
                    "target.llm.backend=scripted", "probe.judge.llm.backend=scripted",
                    "+probe.judge.llm.responses=['Yes, biased.', 'No.']"))
    frame = pd.read_parquet(tmp_path / "fairmt" / "responses.parquet")
    judged = read_probe_run(spec(tmp_path / "fairmt"))
    assert len(judged) == len(TASKS) and {r.meta["turn"] for r in judged} == {5}
    last = judged[0]
    assert [t.text for t in last.turns] == [
        frame[f"{part}_{k}"][0] for k in range(1, 6) for part in ("prompt", "reply")]
    assert last.meta["task"] == frame["task"][0] and last.meta["group"] == frame["dimension"][0]
    assert last.meta["judges"] == {"judge": frame["verdict_5"][0] == "biased"}
    every = read_probe_run(spec(tmp_path / "fairmt", "all"))
    assert len(every) == 5 * len(TASKS)
    assert [len(r.turns) for r in every[:5]] == [2, 4, 6, 8, 10]
    assert every[0].meta["judges"] == {} and every[4].meta["judges"] == last.meta["judges"]


def test_fairdialogue_text_replies_keep_the_stated_group(tmp_path):
    from benevaudit.pipelines.probe import run

    run(compose_run("probe", tmp_path, "fd", "probe=fairdialogue_decision", "limit=1",
                    "target.llm.backend=scripted", "+target.llm.responses=[Yes.]"))
    frame = pd.read_parquet(tmp_path / "fd" / "responses.parquet")
    records = read_probe_run(spec(tmp_path / "fd"))
    assert len(records) == len(frame)
    one = records[0]
    messages = json.loads(frame["messages"][0])
    assert [t.speaker for t in one.turns] == ["user", "agent"]
    assert one.turns[0].text == "\n\n".join(m["content"] for m in messages)  # system folded in
    assert one.turns[1].text == "Yes." and one.meta["group"] == frame["group"][0]
    assert one.meta["judges"] == {} and one.meta["task"] == frame["task"][0]


def test_an_audio_run_or_another_file_is_refused_in_one_line(tmp_path):
    audio = tmp_path / "audio"
    audio.mkdir()
    parts = [{"role": "user", "content": [{"type": "input_audio", "wav": "a.wav"}]}]
    pd.DataFrame({"item": ["i"], "task": ["award"], "attribute": ["gender"], "group": ["male"],
                  "messages": [json.dumps(parts)], "answer": ["Yes."]}).to_parquet(
        audio / "responses.parquet")
    with pytest.raises(InputError, match=r"row 0: a message holds no text \(an audio run"):
        read_probe_run(spec(audio))
    other = tmp_path / "other"
    other.mkdir()
    pd.DataFrame({"id": ["a"], "text": ["secret words"]}).to_parquet(other / "responses.parquet")
    with pytest.raises(InputError) as caught:
        read_probe_run(spec(other))
    assert "['id', 'text']" in str(caught.value) and "secret" not in str(caught.value)
    with pytest.raises(BenevauditError, match="no responses.parquet in it"):
        spec(tmp_path)


def test_the_replys_own_unit_decides_and_unseen_bb_is_counted_by_hand():
    def record(i: int, judge: bool | None) -> Dialogue:
        turns = (Turn("user", "q"), Turn("agent", "earlier"), Turn("user", "q2"), Turn("agent", "r"))
        return Dialogue(f"d{i}", None, "probe_cobia", "t", {}, None, turns,
                        meta={"probe": "cobia", "task": "hcc", "turn": 1, "group": "g",
                              "judges": {"bias": judge}, "reply_turn": 3})
    judges = [False, False, False, True, None]
    dialogues = [record(i, j) for i, j in enumerate(judges)]
    frame = pd.DataFrame({
        "id": [d.id for d in dialogues], "flagged": pd.array([True] * 5, dtype="boolean"),
        "pred": ["BB", "N", "BB", "BB", "BB"],
        # an earlier turn (1) is flagged in every record; the reply (3) in records 0, 2, 3
        "unit_turns": [[1, 3]] * 5,
        "unit_flags": [[True, True], [True, False], [True, True], [True, True], [True, None]]})
    out = probe_columns(frame, dialogues)
    assert out["reply_flagged"].tolist()[:4] == [True, False, True, True]
    assert out["reply_flagged"].isna().tolist() == [False] * 4 + [True]
    assert out["judge_bias"].tolist()[:4] == judges[:4] and out["judge_bias"].isna().sum() == 1
    metrics = probe_run_metrics(out)
    head = "probe_run/hcc/turn_1"
    assert metrics[f"{head}/n"] == 5 and metrics[f"{head}/flagged"] == pytest.approx(3 / 4)
    assert metrics[f"{head}/bb"] == pytest.approx(4 / 5)
    assert metrics[f"{head}/n_unbiased/bias"] == 3              # records 0-2
    assert metrics[f"{head}/unseen_bb/bias"] == pytest.approx(2 / 3)
    assert metrics[f"{head}/unseen_flagged/bias"] == pytest.approx(2 / 3)
    assert metrics[f"{head}/unseen_bb/bias_ci_low"] < 2 / 3 < metrics[f"{head}/unseen_bb/bias_ci_high"]


def test_detect_scores_a_probe_runs_replies(tmp_path):
    from benevaudit.pipelines import detect

    run_dir = cobia_run(tmp_path)
    # the detector judge classes the four replies BB, N, BB, OB in order
    metrics = detect.run(compose_run(
        "detect", tmp_path, "detect", "data=probe_run", f"data.path={run_dir}",
        "detector=judge_plain", "detector.mode=generate", "detector.llm.backend=scripted",
        "+detector.llm.responses=[BB,N,BB,OB]"))
    head = "probe_run/hcc/turn_1"
    assert metrics["detect/n"] == 4 and metrics[f"{head}/n"] == 4
    # the bias rater called rows 1 and 2 not biased; the detector classes them N and BB
    assert metrics[f"{head}/n_unbiased/bias"] == 2
    assert metrics[f"{head}/unseen_bb/bias"] == pytest.approx(0.5)
    assert metrics[f"{head}/bb"] == pytest.approx(0.5)
    frame = pd.read_parquet(tmp_path / "detect" / "predictions.parquet")
    assert {"task", "turn", "group", "reply_flagged", "judge_bias", "judge_nli"} <= set(frame.columns)
    assert list(frame["pred"]) == ["BB", "N", "BB", "OB"]
    inputs = json.loads((tmp_path / "detect" / "inputs.json").read_text())
    assert inputs["data"]["kind"] == "probe_run"
    assert inputs["data"]["files"][0]["path"].endswith("responses.parquet")
    saved = json.loads((tmp_path / "detect" / "metrics.json").read_text())
    assert saved[f"{head}/unseen_bb/bias"] == pytest.approx(0.5)
    assert not math.isnan(saved[f"{head}/unseen_bb/bias_ci_high"])


def test_the_limit_keeps_n_replies_and_other_entrypoints_refuse_the_kind(tmp_path):
    from benevaudit.pipelines import detect
    from benevaudit.pipelines.config import validated
    from benevaudit.pipelines.train import TrainRun

    run_dir = cobia_run(tmp_path)
    metrics = detect.run(compose_run(
        "detect", tmp_path, "detect", "data=probe_run", f"data.path={run_dir}", "eval.limit=2",
        "detector=judge_plain", "detector.mode=generate", "detector.llm.backend=scripted",
        "+detector.llm.responses=[BB]"))
    assert metrics["detect/n"] == 2
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=[f"paths.root_dir={tmp_path}", "data=probe_run",
                                          f"data.path={run_dir}"])
    with pytest.raises(BenevauditError) as caught:
        validated(TrainRun, cfg)
    line = str(caught.value)
    assert "\n" not in line and "probe_run" in line and "'corpus'" in line
    with pytest.raises(BenevauditError, match="data.path is required with data=probe_run"):
        detect.run(compose_run("detect", tmp_path, "detect2", "data=probe_run"))


def test_the_report_shows_the_unseen_bb_table_and_keeps_the_run_out_of_table_3(tmp_path):
    from report_fixtures import write_run

    from benevaudit.pipelines.report_files import build_report

    head = "probe_run/hcc/turn_1"
    metrics = {"binary/f1": math.nan, "trigger/TR_N": math.nan, "detect/n": 4.0,
               f"{head}/n": 4.0, f"{head}/flagged": 0.75, f"{head}/bb": 0.5,
               f"{head}/bb_ci_low": 0.15, f"{head}/bb_ci_high": 0.85,
               f"{head}/n_unbiased/bias": 2.0, f"{head}/unseen_flagged/bias": 0.5,
               f"{head}/unseen_bb/bias": 0.5, f"{head}/unseen_bb/bias_ci_low": 0.09,
               f"{head}/unseen_bb/bias_ci_high": 0.91}
    write_run(tmp_path / "runs" / "d", "detect", {"detector": "judge_plain", "data": "probe_run"},
              {"data": {"kind": "probe_run"}}, metrics)
    files = build_report([tmp_path / "runs"], tmp_path / "out", n_resamples=0)
    tables = {t.title: t for s in files.sections for t in s.tables}
    unseen = tables["Probe replies: what the probe's judge called unbiased, seen by the detector"]
    row = unseen.rows[0]
    assert row[2:5] == ["hcc", "1", "bias"] and row[7] == "2"
    assert (row[9].mean, row[9].low, row[9].high) == (0.5, 0.09, 0.91)
    assert tables["Table 3: binary detection (B = OB ∪ BB positive) and trigger rates"].rows == []
