"""benevaudit inside Inspect AI, and Inspect logs as benevaudit input (``make test-inspect``).

Offline, with Inspect's mock model provider: the FairMT task sends exactly the requests
``probe.py probe=fairmt`` sends (compared with its dry run, request by request); its metrics
equal what ``probe.py probe=fairmt probe.answers.inspect_log=<log>`` computes from the same
log; and ``detect.py data=inspect_log`` scores the log's replies. The tests need inspect-ai,
which lives in ``.venv-inspect`` (``make inspect-env``); elsewhere they skip.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

pytestmark = [pytest.mark.inspect,
              pytest.mark.skipif(find_spec("inspect_ai") is None,
                                 reason="inspect tier: needs inspect-ai (make test-inspect)")]

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "{reply}"       # what a dry run puts where a reply would be


def mock_model(reply):
    """Inspect's mock provider answering ``reply(messages)``, with token usage set (its default
    usage counts tokens with tiktoken, which downloads its table)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls: list[tuple[list[dict[str, str]], object]] = []

    def answer(messages, tools, tool_choice, config):
        plain = [{"role": m.role, "content": m.text} for m in messages]
        calls.append((plain, config))
        out = ModelOutput.from_content(model="mockllm", content=reply(plain))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=answer, memoize=False), calls


def inspect_eval(task: str, model, log_dir: Path, **task_args):
    from inspect_ai import eval as inspect_run

    [log] = inspect_run(task, model=model, task_args=task_args, log_dir=str(log_dir),
                        display="none")
    assert log.status == "success", log.error
    return log


def compose_run(primary: str, tmp: Path, run: str, *overrides: str):
    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        return compose(primary, overrides=[
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / run}", "progress=false",
            "logger=none", "llm_cache=null", *overrides])


def test_the_fairmt_task_sends_the_probes_requests(tmp_path):
    from benevaudit.llm.base import request_seed

    subprocess.run([sys.executable, "probe.py", "probe=fairmt", "limit=1", "dry_run=true",
                    "logger=none", "llm_cache=null", f"hydra.run.dir={tmp_path / 'dry'}"],
                   cwd=ROOT, check=True, capture_output=True)
    recorded = [json.loads(line) for line in
                (tmp_path / "dry" / "requests.jsonl").read_text().splitlines()]
    model, calls = mock_model(lambda messages: PLACEHOLDER)
    inspect_eval("benevaudit/fairmt", model, tmp_path / "logs", limit=1)
    expected = {json.dumps(r["messages"]) for r in recorded}
    sent = {json.dumps(messages) for messages, _ in calls}
    assert len(recorded) == 36 and sent == expected          # 6 tasks × (5 turns + 1 judge)
    budget = {json.dumps(r["messages"]): r["max_tokens"] for r in recorded}
    assert all(config.max_tokens == budget[json.dumps(messages)] and config.temperature == 0.0
               for messages, config in calls)                # 150 for the target, 16 the judge
    # each request's own seed, as benevaudit's backends send it
    assert all(config.seed == request_seed(messages, 42) for messages, config in calls)
    assert {r["max_tokens"] for r in recorded} == {150, 16}


def judge_says(messages):
    """The target replies with its turn number; the judge says yes to replies of even
    dialogues' turn 5 by the length of the system prompt (deterministic, mixed)."""
    if messages[0]["role"] == "system" and messages[-1]["content"].startswith("reply "):
        return "Yes, it is biased." if len(messages[0]["content"]) % 2 else "No."
    return f"reply {sum(m['role'] == 'user' for m in messages)}"


def test_the_tasks_metrics_equal_the_probes_rates_on_its_log(tmp_path):
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(judge_says)
    log = inspect_eval("benevaudit/fairmt", model, tmp_path / "logs", limit=2)
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert "fairmt/mean/bias_rate" in shown and len(log.samples) == 12
    verdicts = [s.scores["benevaudit/fairmt_judge"].value for s in log.samples]
    assert {"biased", "not_biased"} == set(verdicts)        # the mock judge's two answers
    metrics = run(compose_run("probe", tmp_path, "scored", "probe=fairmt",
                              f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    ran = json.loads((tmp_path / "scored" / "run.json").read_text())["ran"]
    assert ran["answers"] == str(tmp_path / "logs") and metrics["fairmt/n_dialogues"] == 12
    for name, value in shown.items():
        assert (math.isnan(value) and math.isnan(metrics[name])) or value == pytest.approx(
            metrics[name]), name
    assert shown["fairmt/mean/bias_rate"] == pytest.approx(
        sum(v == "biased" for v in verdicts) / len(verdicts), abs=0.5)


def test_detect_scores_the_replies_of_an_inspect_log(tmp_path):
    from benevaudit.pipelines import detect
    from benevaudit.replies import InspectLogDataSpec, read_inspect_log

    model, _ = mock_model(judge_says)
    log = inspect_eval("benevaudit/fairmt", model, tmp_path / "logs", limit=1)
    files = list((tmp_path / "logs").glob("*.eval"))
    last = read_inspect_log(InspectLogDataSpec.of(
        {"kind": "inspect_log", "path": str(files[0]), "turns": "last"}, "data"))
    every = read_inspect_log(InspectLogDataSpec.of(
        {"kind": "inspect_log", "path": str(tmp_path / "logs"), "turns": "all"}, "data"))
    assert len(last) == len(log.samples) == 6 and len(every) == 30
    assert [t.text for t in last[0].turns[1::2]] == [f"reply {k}" for k in range(1, 6)]
    assert last[0].meta["turn"] == 5 and last[0].meta["task"] == log.samples[0].metadata["task"]
    assert set(last[0].meta["judges"]) == {"benevaudit/fairmt_judge"}
    metrics = detect.run(compose_run(
        "detect", tmp_path, "detect", "data=inspect_log", f"data.path={tmp_path / 'logs'}",
        "detector=judge_plain", "detector.mode=generate", "detector.llm.backend=scripted",
        "+detector.llm.responses=[BB,N]"))
    assert metrics["detect/n"] == 6
    inputs = json.loads((tmp_path / "detect" / "inputs.json").read_text())
    assert inputs["data"]["kind"] == "inspect_log"
    assert inputs["data"]["files"][0]["path"].endswith(".eval")


def test_a_dialogue_answered_twice_is_refused_naming_the_sample(tmp_path):
    import shutil

    from benevaudit.errors import BenevauditError
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(judge_says)
    inspect_eval("benevaudit/fairmt", model, tmp_path / "logs", limit=1,
                 options="probe.tasks=[Jailbreak_Tips]")
    log = next((tmp_path / "logs").glob("*.eval"))
    shutil.copy(log, log.with_name(f"z-{log.name}"))        # the same run, listed twice
    with pytest.raises(BenevauditError, match=r"sample Jailbreak_Tips/1k/0 .*answered twice"):
        run(compose_run("probe", tmp_path, "scored", "probe=fairmt",
                        f"probe.answers.inspect_log={tmp_path / 'logs'}"))
