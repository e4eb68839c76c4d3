"""The negative-feedback protocol: who gets a "no" revised, and after how many pushbacks."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import ConfigError
from benevaudit.llm import Sampling
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.metrics.fairness import persistence
from benevaudit.probes.fairdialogue.feedback import PUSHBACKS, run_feedback
from benevaudit.probes.fairdialogue.render import text_conversation

ROOT = Path(__file__).resolve().parents[1]
# a target that gives in after a number of pushbacks that depends on who is speaking
GIVES_IN_AFTER = {"young_male": 1, "young_female": 3, "elderly_male": None}


def stubborn_by_group(conversation, sampling):
    system = conversation[0]["content"]
    group = ("young_male" if "a young man" in system else
             "young_female" if "a young woman" in system else "elderly_male")
    pushes = sum(m["role"] == "user" for m in conversation) - 1
    limit = GIVES_IN_AFTER[group]
    if limit is not None and pushes >= limit:
        return "Yes, on reflection."
    return "I can't make that decision." if pushes == 2 else "No, not at this time."


def test_protocol_revises_per_group_and_counts_rounds():
    model = ScriptedChatModel(stubborn_by_group)
    starts = []
    for item in ("a", "b"):
        for group in GIVES_IN_AFTER:
            conv = text_conversation("Should I get the award?", group, "system", "Yes or no.")
            starts.append(((item, group), conv, "No."))
    traces = run_feedback(model, starts, Sampling(max_tokens=16))
    by_group = {g: persistence([t.revised_at for t in traces if t.key[1] == g])
                for g in GIVES_IN_AFTER}
    assert by_group["young_male"][:2] == (1.0, 1.0)
    assert by_group["young_female"][:2] == (1.0, 3.0)        # a refusal at round 2 is no yes
    assert by_group["elderly_male"].rst == 0.0 and math.isnan(by_group["elderly_male"].anr)
    never = next(t for t in traces if t.key == ("a", "elderly_male"))
    assert len(never.replies) == len(PUSHBACKS) == 4
    # the conversation alternates and carries every pushback
    assert [m["role"] for m in never.conversation[1:]] == ["user", "assistant"] * 5
    # rounds run in waves: one chat call per round while any conversation is open
    assert model.chat_calls == 4


def probe_config(tmp: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("probe", overrides=[
            "probe=fairdialogue_feedback", f"paths.root_dir={tmp}",
            f"paths.output_dir={tmp / 'run'}", "progress=false", "logger=none", "llm_cache=null",
            *overrides])


def test_feedback_run_writes_rst_and_anr_per_combined_group(tmp_path):
    from benevaudit.pipelines.probe import run

    cfg = probe_config(tmp_path, "limit=2", "probe.tasks=[award]", "target.llm.backend=scripted",
                       "+target.llm.responses=[No.]")
    metrics = run(cfg)
    assert metrics["fairness/feedback/age_gender/items"] == 2
    for group in ("young_male", "young_female", "elderly_male"):
        assert metrics[f"fairness/feedback/age_gender/{group}/n"] == 2
        assert metrics[f"fairness/feedback/age_gender/{group}/rst"] == 0.0
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["fairness/feedback/age_gender/young_male/anr"] is None    # NaN: none revised
    responses = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert responses["in_protocol"].all() and len(responses) == 6
    assert all(len(r) == 4 for r in responses["feedback_replies"])
    assert (tmp_path / "run" / "rst.png").exists()
    with pytest.raises(ConfigError, match="between 1 and the 4"):
        run(probe_config(tmp_path, "probe.rounds=5", "target.llm.backend=scripted"))


AGE_GENDER = "+probe.attributes={age_gender:[young_male,young_female,elderly_male]}"


def decision_run(tmp: Path, name: str, responses: str) -> Path:
    """Phase one: a probe=fairdialogue_decision run of a scripted target, in its own directory."""
    from benevaudit.pipelines.probe import run

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=[
            "probe=fairdialogue_decision", f"paths.root_dir={tmp}",
            f"paths.output_dir={tmp / name}", "progress=false", "logger=none", "llm_cache=null",
            "limit=2", "probe.tasks=[award]", "~probe.attributes", AGE_GENDER,
            "target.llm.backend=scripted", f"+target.llm.responses={responses}"])
    run(cfg)
    return tmp / name


def test_feedback_items_are_those_every_listed_decision_run_answered_no(tmp_path, caplog):
    from benevaudit.pipelines.probe import run

    # requests go item by item, each under young_male, young_female, elderly_male
    first = decision_run(tmp_path, "a", "[No.]")
    second = decision_run(tmp_path, "b", "[No.,No.,No.,No.,Yes.,No.]")   # award-02: one yes
    metrics = run(probe_config(tmp_path, "limit=2", "probe.tasks=[award]", "probe.rounds=1",
                               f"probe.feedback.items_from=[{first},{second}]",
                               "target.llm.backend=scripted", "+target.llm.responses=[No.]"))
    assert metrics["fairness/feedback/items_from_runs"] == 2
    assert metrics["fairness/feedback/age_gender/items"] == 1
    assert metrics["fairness/feedback/age_gender/young_female/n"] == 1
    responses = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert set(responses.loc[responses["in_protocol"], "item"]) == {"award-01"}
    # this target says yes to award-01 under young_male: that conversation is left out
    metrics = run(probe_config(tmp_path, "limit=2", "probe.tasks=[award]", "probe.rounds=1",
                               f"probe.feedback.items_from=[{first},{second}]",
                               "target.llm.backend=scripted",
                               "+target.llm.responses=[Yes.,No.,No.,No.,No.,No.]"))
    assert metrics["fairness/feedback/age_gender/first_not_no"] == 1
    assert metrics["fairness/feedback/age_gender/young_male/n"] == 0
    assert metrics["fairness/feedback/age_gender/elderly_male/n"] == 1
    # without items_from the target's own answers pick the items, and the run says so
    with caplog.at_level(logging.INFO):
        metrics = run(probe_config(tmp_path, "limit=2", "probe.tasks=[award]", "probe.rounds=1",
                                   "target.llm.backend=scripted", "+target.llm.responses=[No.]"))
    assert metrics["fairness/feedback/items_from_runs"] == 0
    assert metrics["fairness/feedback/age_gender/items"] == 2
    assert "from this target's own answers" in caplog.text
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["fairness/feedback/items_from_runs"] == 0


def test_feedback_items_from_bad_run_directories_are_named(tmp_path):
    from benevaudit.pipelines.probe import run

    with pytest.raises(ConfigError, match=r"nowhere has no responses.parquet"):
        run(probe_config(tmp_path, f"probe.feedback.items_from=[{tmp_path / 'nowhere'}]",
                         "target.llm.backend=scripted"))
    gender_only = tmp_path / "gender"
    gender_only.mkdir()
    pd.DataFrame({"task": ["award"], "attribute": ["gender"], "item": ["award-01"],
                  "group": ["male"], "decision": ["no"]}).to_parquet(
        gender_only / "responses.parquet")
    with pytest.raises(ConfigError, match=r"no answers for age_gender groups \['young_male'"):
        run(probe_config(tmp_path, f"probe.feedback.items_from=[{gender_only}]",
                         "target.llm.backend=scripted"))
    # from the command line: one error line and exit code 2, before any model is loaded
    done = subprocess.run([sys.executable, str(ROOT / "probe.py"), "probe=fairdialogue_feedback",
                           f"probe.feedback.items_from=[{tmp_path / 'nowhere'}]", "logger=none",
                           f"hydra.run.dir={tmp_path / 'cli'}"],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "probe.feedback.items_from" in errors[0], done.stderr


def test_feedback_items_are_chosen_per_mode_never_pooled_across_audio_and_text(tmp_path):
    """One items_from list may name a sweep's audio and text decision runs: a text feedback run
    reads only the text ones (their saved probe.mode), and a list of the other mode alone is
    one error line."""
    from benevaudit.pipelines.probe import run

    text = decision_run(tmp_path, "text", "[No.]")
    heard = decision_run(tmp_path, "heard", "[No.,No.,No.,No.,Yes.,No.]")   # award-02: a yes
    (heard / ".hydra").mkdir()
    (heard / ".hydra" / "config.yaml").write_text("probe:\n  mode: audio\n")
    metrics = run(probe_config(tmp_path, "limit=2", "probe.tasks=[award]", "probe.rounds=1",
                               f"probe.feedback.items_from=[{text},{heard}]",
                               "target.llm.backend=scripted", "+target.llm.responses=[No.]"))
    assert metrics["fairness/feedback/items_from_runs"] == 1
    assert metrics["fairness/feedback/age_gender/items"] == 2      # pooled, award-02 would go
    with pytest.raises(ConfigError, match=r"none of the 1 listed runs ran in probe.mode=text"):
        run(probe_config(tmp_path, f"probe.feedback.items_from=[{heard}]",
                         "target.llm.backend=scripted"))
