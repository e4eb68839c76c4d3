"""The negative-feedback protocol: who gets a "no" revised, and after how many pushbacks."""

from __future__ import annotations

import json
import math
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
    from benevaudit.pipelines.probe_fairdialogue import run

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
