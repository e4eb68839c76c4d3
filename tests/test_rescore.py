"""``probe.py rescore=<run dir>``: a CoBia and a FairMT-Bench run made with scripted models are
judged and scored again from their saved replies. With the same judges the metrics are the
original's; with other judge replies the verdicts follow the new judge. The recorded target is
made unbuildable (a scripted backend with an empty list of replies, which the backend refuses),
so a rescore that built it would fail."""

import json
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import ConfigError, InputError
from benevaudit.llm import build_from_block
from benevaudit.probes import models

ROOT = Path(__file__).resolve().parents[1]
COBIA_JUDGES = [f"probe.judges.{j}.llm.backend=scripted" for j in ("bias", "nli", "guard",
                                                                    "refusal")]
COBIA_SAID = ["+probe.judges.nli.llm.responses=[Agrees,Negates]",
              "+probe.judges.refusal.llm.responses=[Compliance]"]


def run(tmp: Path, name: str, *overrides: str) -> dict[str, float]:
    from benevaudit.pipelines.probe import run as probe_run

    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=[
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / name}", "progress=false",
            "logger=none", "llm_cache=null", *overrides])
    return probe_run(cfg)


def unloadable_target(run_dir: Path, tmp: Path) -> None:
    """Point the recorded target at a model that cannot be built (same backend, so what the
    run records of its target is unchanged)."""
    record = json.loads((run_dir / "run.json").read_text())
    record["config"]["target"]["llm"]["responses"] = []
    with pytest.raises(ValueError, match="responses must not be empty"):
        build_from_block(record["config"]["target"]["llm"])
    (run_dir / "run.json").write_text(json.dumps(record))


def judged(metrics: dict[str, float]) -> dict[str, float]:
    """The metrics of judging and scoring (not the request counts of the models called)."""
    return {k: v for k, v in metrics.items() if not k.startswith("llm/")}


def same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k])
                                        for k in a)


@pytest.fixture
def cobia(tmp_path):
    metrics = run(tmp_path, "first", "probe=cobia_hcc", "limit=4",
                  "target.llm.backend=scripted",
                  "+target.llm.responses=[They are harsh.,They are kind.]", *COBIA_JUDGES,
                  "+probe.judges.bias.llm.responses=[Biased,Unbiased,Unbiased,hmm]",
                  *COBIA_SAID)
    unloadable_target(tmp_path / "first", tmp_path)
    return tmp_path, metrics


def test_a_cobia_run_rescored_with_the_same_judges_gives_the_same_metrics(cobia):
    tmp, first = cobia
    again = run(tmp, "again", "probe=cobia_hcc", f"rescore={tmp / 'first'}", *COBIA_JUDGES,
                "+probe.judges.bias.llm.responses=[Biased,Unbiased,Unbiased,hmm]", *COBIA_SAID)
    assert same(judged(again), judged(first))
    assert again["cobia/invalid/bias"] == 1.0 and again["cobia/judge/bias/invalid"] == 1.0
    assert again["cobia/judge/bias/invalid_rate"] == 0.25
    before = pd.read_parquet(tmp / "first" / "responses.parquet")
    after = pd.read_parquet(tmp / "again" / "responses.parquet")
    assert before.equals(after)                        # replies and verdicts, column for column
    record = json.loads((tmp / "again" / "run.json").read_text())
    assert record["config"]["rescore"] == str(tmp / "first") and record["status"] == "complete"
    assert [f["path"] for f in record["inputs"]["rescore"]["files"]] == [
        str(tmp / "first" / "responses.parquet")]
    assert "llm/requests" not in again or again["llm/requests"] < first["llm/requests"]


def test_a_cobia_run_rescored_with_another_judge_gets_its_verdicts(cobia):
    tmp, first = cobia
    again = run(tmp, "again", "probe=cobia_hcc", f"rescore={tmp / 'first'}", *COBIA_JUDGES,
                "+probe.judges.bias.llm.responses=[Unbiased]", *COBIA_SAID)
    before = pd.read_parquet(tmp / "first" / "responses.parquet")
    after = pd.read_parquet(tmp / "again" / "responses.parquet")
    assert before["bias_verdict"].fillna("-").tolist() == ["biased", "not_biased", "not_biased",
                                                           "-"]
    assert list(after["bias_verdict"]) == ["not_biased"] * 4
    assert list(after["response"]) == list(before["response"])
    assert list(after["nli_verdict"]) == list(before["nli_verdict"])   # that judge unchanged
    assert first["cobia/bias_rate/hcc/bias/all"] == pytest.approx(1 / 3)
    assert again["cobia/bias_rate/hcc/bias/all"] == 0.0 and again["cobia/invalid/bias"] == 0.0
    assert again["cobia/bias_rate/hcc/nli/all"] == first["cobia/bias_rate/hcc/nli/all"]


def test_only_the_judges_are_built(cobia, monkeypatch):
    tmp, _ = cobia
    built = []
    real = models.build_from_block
    monkeypatch.setattr(models, "build_from_block",
                        lambda spec, cache=None: built.append(spec.responses) or real(spec, cache))
    run(tmp, "again", "probe=cobia_hcc", f"rescore={tmp / 'first'}", *COBIA_JUDGES, *COBIA_SAID)
    assert built and all(spec_responses != [] for spec_responses in built)


@pytest.fixture
def fairmt(tmp_path):
    metrics = run(tmp_path, "first", "probe=fairmt", "limit=1", "target.llm.backend=scripted",
                  "+target.llm.responses=[Fine.]", "probe.judge.llm.backend=scripted",
                  "+probe.judge.llm.responses=['Yes, biased.', 'No.', maybe]")
    unloadable_target(tmp_path / "first", tmp_path)
    return tmp_path, metrics


def test_a_fairmt_run_rescored_with_the_same_judge_gives_the_same_metrics(fairmt):
    tmp, first = fairmt
    again = run(tmp, "again", "probe=fairmt", f"rescore={tmp / 'first'}",
                "probe.judge.llm.backend=scripted",
                "+probe.judge.llm.responses=['Yes, biased.', 'No.', maybe]")
    assert same(judged(again), judged(first))
    before = pd.read_parquet(tmp / "first" / "responses.parquet")
    after = pd.read_parquet(tmp / "again" / "responses.parquet")
    assert before.equals(after)
    assert "invalid" in set(before["verdict"])
    task = before["task"][0]
    n_invalid = float((before[before["task"] == task]["verdict"] == "invalid").sum())
    assert again[f"fairmt/{task}/invalid"] == n_invalid
    assert again[f"fairmt/{task}/invalid_rate"] == n_invalid / float((before["task"] == task).sum())


def test_a_fairmt_run_rescored_with_another_judge_gets_its_verdicts(fairmt):
    tmp, first = fairmt
    again = run(tmp, "again", "probe=fairmt", f"rescore={tmp / 'first'}",
                "probe.judge.llm.backend=scripted", "+probe.judge.llm.responses=[No.]")
    after = pd.read_parquet(tmp / "again" / "responses.parquet")
    before = pd.read_parquet(tmp / "first" / "responses.parquet")
    assert set(before["verdict"]) == {"biased", "not_biased", "invalid"}
    assert set(after["verdict"]) == {"not_biased"}
    assert list(after["reply_5"]) == list(before["reply_5"])
    assert again["fairmt/mean/bias_rate"] == 0.0 < first["fairmt/mean/bias_rate"]


def test_the_judge_turns_come_from_the_current_config(fairmt):
    tmp, _ = fairmt
    run(tmp, "again", "probe=fairmt", f"rescore={tmp / 'first'}", "probe.judge_turns=all",
        "probe.judge.llm.backend=scripted", "+probe.judge.llm.responses=[Yes.]")
    after = pd.read_parquet(tmp / "again" / "responses.parquet")
    assert all((after[f"verdict_{k}"] == "biased").all() for k in range(1, 6))


def test_another_probe_or_a_folder_without_replies_is_refused(fairmt):
    tmp, _ = fairmt
    with pytest.raises(ConfigError, match=r"is a fairmt run.*this config's probe is cobia"):
        run(tmp, "again", "probe=cobia_hcc", f"rescore={tmp / 'first'}")
    with pytest.raises(ConfigError, match=r"no responses.parquet there"):
        run(tmp, "again2", "probe=fairmt", f"rescore={tmp}")


def test_rows_that_are_not_the_recorded_dialogues_are_refused(fairmt):
    tmp, _ = fairmt
    frame = pd.read_parquet(tmp / "first" / "responses.parquet")
    frame.iloc[1:].to_parquet(tmp / "first" / "responses.parquet")
    with pytest.raises(InputError, match=r"1 dialogues unanswered"):
        run(tmp, "again", "probe=fairmt", f"rescore={tmp / 'first'}",
            "probe.judge.llm.backend=scripted")


def test_a_fairdialogue_decision_run_is_parsed_and_scored_again(tmp_path):
    """FairDialogue has no judge: a rescore parses the saved answers again and scores them,
    and gives the recorded run's metrics and rows; the target is never built."""
    first = run(tmp_path, "first", "probe=fairdialogue_decision", "limit=1",
                "target.llm.backend=scripted", "+target.llm.responses=[Yes.,No.,maybe]")
    unloadable_target(tmp_path / "first", tmp_path)
    again = run(tmp_path, "again", "probe=fairdialogue_decision", f"rescore={tmp_path / 'first'}")
    assert same(judged(again), judged(first)) and first["parse/award/invalid"] > 0
    want = pd.read_parquet(tmp_path / "first" / "responses.parquet")
    got = pd.read_parquet(tmp_path / "again" / "responses.parquet")
    pd.testing.assert_frame_equal(want, got[list(want.columns)])


def test_a_recommendation_rescore_takes_its_scoring_from_the_current_config(tmp_path):
    lists = "'1. Ann 2. Bo 3. Cy 4. Di 5. Ed','1. Ed 2. Di 3. Cy 4. Bo 5. Ann'"
    first = run(tmp_path, "first", "probe=fairdialogue_recommendation", "limit=1",
                "target.llm.backend=scripted", f"+target.llm.responses=[{lists}]")
    unloadable_target(tmp_path / "first", tmp_path)
    same_scoring = run(tmp_path, "again", "probe=fairdialogue_recommendation",
                       f"rescore={tmp_path / 'first'}")
    assert same(judged(same_scoring), judged(first))
    other = "pairs" if json.loads((tmp_path / "first" / "run.json").read_text())[
        "config"]["probe"]["prag"]["normalise"] == "printed" else "printed"
    rescored = run(tmp_path, "other", "probe=fairdialogue_recommendation",
                   f"rescore={tmp_path / 'first'}", f"probe.prag.normalise={other}")
    direct = run(tmp_path, "direct", "probe=fairdialogue_recommendation", "limit=1",
                 "target.llm.backend=scripted", f"+target.llm.responses=[{lists}]",
                 f"probe.prag.normalise={other}")
    assert same(judged(rescored), judged(direct))
    record = json.loads((tmp_path / "other" / "run.json").read_text())
    assert record["config"]["probe"]["prag"]["normalise"] == other   # the current config's


def test_an_audio_or_feedback_fairdialogue_run_is_refused(tmp_path):
    run(tmp_path, "first", "probe=fairdialogue_decision", "limit=1",
        "target.llm.backend=scripted", "+target.llm.responses=[Yes.]")
    record = json.loads((tmp_path / "first" / "run.json").read_text())
    record["config"]["probe"]["mode"] = "audio"
    (tmp_path / "first" / "run.json").write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"re-scores text-mode FairDialogue runs"):
        run(tmp_path, "again", "probe=fairdialogue_decision", f"rescore={tmp_path / 'first'}")


def test_a_dry_rescore_records_the_judges_requests_alone(fairmt):
    tmp, _ = fairmt
    run(tmp, "dry", "probe=fairmt", f"rescore={tmp / 'first'}", "dry_run=true",
        "probe.judge.llm.backend=scripted")
    lines = [json.loads(x) for x in (tmp / "dry" / "requests.jsonl").read_text().splitlines()]
    assert lines and all(x.get("judge") == "bias" for x in lines)
    # the judge reads the saved fifth replies: every request's user turn is one of them
    replies = set(pd.read_parquet(tmp / "first" / "responses.parquet")["reply_5"])
    assert {x["messages"][-1]["content"] for x in lines} <= replies
