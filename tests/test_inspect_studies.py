"""CoBia and FairDialogue inside Inspect AI (``make test-inspect``), offline on Inspect's mock
model provider: each task sends exactly the requests ``probe.py`` sends (compared with its dry
run, request by request); its metrics equal what ``probe.py … probe.answers.inspect_log=<log>``
computes from the same log; and a log listed twice is refused. The tests need inspect-ai,
which lives in ``.venv-inspect`` (``make inspect-env``); elsewhere they skip.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pandas as pd
import pytest
from test_inspect import PLACEHOLDER, ROOT, compose_run, inspect_eval, mock_model

pytestmark = [pytest.mark.inspect,
              pytest.mark.skipif(find_spec("inspect_ai") is None,
                                 reason="inspect tier: needs inspect-ai (make test-inspect)")]


def dry_requests(tmp_path, *overrides):
    """The requests ``probe.py … dry_run=true`` records, in order."""
    subprocess.run([sys.executable, "probe.py", *overrides, "dry_run=true", "logger=none",
                    "llm_cache=null", f"hydra.run.dir={tmp_path / 'dry'}"],
                   cwd=ROOT, check=True, capture_output=True)
    return [json.loads(line) for line in
            (tmp_path / "dry" / "requests.jsonl").read_text().splitlines()]


def same_requests(recorded, calls):
    """Inspect sent the dry run's requests, each with the dry run's reply budget and the seed
    benevaudit's backends send (its messages' ``request_seed`` under the run's seed, 42)."""
    from benevaudit.llm.base import request_seed

    expected = {json.dumps(r["messages"]) for r in recorded}
    sent = {json.dumps(messages) for messages, _ in calls}
    budget = {json.dumps(r["messages"]): r["max_tokens"] for r in recorded}
    assert sent == expected
    assert all(config.max_tokens == budget[json.dumps(messages)] for messages, config in calls)
    assert all(config.seed == request_seed(messages, 42) for messages, config in calls)


def equal_metrics(shown, metrics):
    assert shown
    for name, value in shown.items():
        assert (math.isnan(value) and math.isnan(metrics[name])) or value == pytest.approx(
            metrics[name]), name


def rater_says(messages):
    """The target answers by the length of its last request; each rater's verdict word (every
    kind's prompt names its words) follows the length of the text it reads, so the verdicts mix
    and differ between raters."""
    last = messages[-1]["content"]
    if "Verdict (Biased or Unbiased)" in last:
        return "Biased" if len(last) % 2 else "Unbiased"
    if "Relation (Enforces" in last:
        return ("Enforces", "Agrees", "Neutral", "Negates", "Maybe")[len(last) % 5]
    if "Decision (Refusal or Compliance)" in last:
        return "Refusal" if len(last) % 3 == 0 else "Compliance"
    if "social_bias" in json.dumps(messages) or "<score>" in json.dumps(messages):
        return "Yes" if len(last) % 2 else "No"
    return f"reply of {len(last)} characters" + "!" * (len(messages) % 4)


def test_the_cobia_task_sends_the_probes_requests(tmp_path):
    recorded = dry_requests(tmp_path, "probe=cobia", "limit=2")
    model, calls = mock_model(lambda messages: PLACEHOLDER)
    log = inspect_eval("benevaudit/cobia", model, tmp_path / "logs", limit=2)
    same_requests(recorded, calls)
    # 2 items × 4 methods, each reply read by 4 model raters (the stand-in has no judges/)
    assert len(log.samples) == 8 and len(recorded) == 40
    assert {r["max_tokens"] for r in recorded} == {128, 12, 16}
    assert all(config.temperature == 0.0 for _, config in calls)


def test_the_cobia_tasks_metrics_equal_the_probes_rates_on_its_log(tmp_path):
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(rater_says)
    log = inspect_eval("benevaudit/cobia", model, tmp_path / "logs", limit=3)
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    verdicts = [s.scores["benevaudit/cobia_raters"].value for s in log.samples]
    assert {v["bias"] for v in verdicts} == {"biased", "not_biased"}
    assert "invalid" in {v["nli"] for v in verdicts}            # "Maybe" names no relation
    metrics = run(compose_run("probe", tmp_path, "scored", "probe=cobia",
                              f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    assert "cobia/ucc/bias/all" in shown
    assert len({v for k, v in shown.items() if k.startswith("cobia/bias_rate/")}) > 1
    equal_metrics(shown, metrics)
    assert metrics["cobia/invalid/nli"] == sum(v["nli"] == "invalid" for v in verdicts)
    # under limit, the samples of items past the first N are left out
    run(compose_run("probe", tmp_path, "first", "probe=cobia", "limit=1",
                    f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    first = pd.read_parquet(tmp_path / "first" / "responses.parquet")
    assert len(first) == 4 and first["id"].nunique() == 1 and len(log.samples) == 12


def test_each_cobia_rater_asks_its_own_grader_role(tmp_path):
    """``grader_bias`` bound: the bias rater asks it alone; the other raters ask ``grader``."""
    from inspect_ai import eval as inspect_run

    target, to_target = mock_model(rater_says)
    bias, to_bias = mock_model(lambda messages: "Biased")
    grader, to_grader = mock_model(rater_says)
    [log] = inspect_run("benevaudit/cobia", model=target, task_args={"limit": 1},
                        model_roles={"grader_bias": bias, "grader": grader},
                        log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error

    def bias_prompt(messages):
        return "Verdict (Biased or Unbiased)" in messages[-1]["content"]

    # 1 item × 4 methods: 4 replies, each read by the bias rater and 3 other model raters
    assert len(to_target) == len(to_bias) == 4 and len(to_grader) == 12
    assert all(bias_prompt(m) for m, _ in to_bias)
    assert not any(bias_prompt(m) for m, _ in to_grader + to_target)
    assert {s.scores["benevaudit/cobia_raters"].value["bias"] for s in log.samples} == {"biased"}


def listed_twice(logs: Path) -> None:
    """The folder's log beside a copy of itself, as a log listed twice."""
    log = next(logs.glob("*.eval"))
    shutil.copy(log, log.with_name(f"z-{log.name}"))


def test_a_cobia_log_listed_twice_is_refused(tmp_path):
    from benevaudit.errors import BenevauditError
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(rater_says)
    inspect_eval("benevaudit/cobia", model, tmp_path / "logs", limit=1,
                 options="probe.methods=[hcc]")
    listed_twice(tmp_path / "logs")
    with pytest.raises(BenevauditError, match=r"/hcc \(epoch 1\): the pair is answered twice"):
        run(compose_run("probe", tmp_path, "scored", "probe=cobia",
                        f"probe.answers.inspect_log={tmp_path / 'logs'}"))


def test_the_fairdialogue_task_sends_the_probes_requests(tmp_path):
    recorded = dry_requests(tmp_path, "probe=fairdialogue_recommendation", "limit=1")
    model, calls = mock_model(lambda messages: PLACEHOLDER)
    log = inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=1,
                       probe="fairdialogue_recommendation")
    same_requests(recorded, calls)
    assert len(log.samples) == len(calls) >= len(recorded) > 0


def group_says(messages):
    """Decisions: yes where the system note names a woman or a young user; lists: the order
    turns with the length of the note."""
    note = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if "yes or no" in messages[-1]["content"]:
        return "Yes." if "woman" in note or "young" in note else "No."
    items = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    turn = len(note) % len(items)
    return "\n".join(f"{i + 1}. {name}" for i, name in enumerate(items[turn:] + items[:turn]))


@pytest.mark.parametrize("kind", ["decision", "recommendation"])
def test_the_fairdialogue_tasks_metrics_equal_the_probes_on_its_log(tmp_path, kind):
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(group_says)
    log = inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=2,
                       probe=f"fairdialogue_{kind}")
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    metrics = run(compose_run("probe", tmp_path, "scored", f"probe=fairdialogue_{kind}",
                              f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    equal_metrics(shown, metrics)
    if kind == "decision":       # women said yes, men no: the gender GUS is not zero
        assert shown["fairness/award/gender/gus"] > 0
        assert shown["fairness/award/accent/gus"] == 0
    else:
        assert any(v > 0 for k, v in shown.items() if k.endswith("/snsr"))


def test_a_fairdialogue_log_listed_twice_or_of_another_kind_is_refused(tmp_path):
    from benevaudit.errors import BenevauditError
    from benevaudit.pipelines.probe import run

    model, _ = mock_model(group_says)
    inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=1,
                 options="probe.tasks=[award]")
    with pytest.raises(BenevauditError, match=r"a decision sample, and probe.kind=recommendation"):
        run(compose_run("probe", tmp_path, "other", "probe=fairdialogue_recommendation",
                        f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    listed_twice(tmp_path / "logs")
    with pytest.raises(BenevauditError, match=r"sample award/.* the cell is answered twice"):
        run(compose_run("probe", tmp_path, "scored", "probe=fairdialogue_decision",
                        f"probe.answers.inspect_log={tmp_path / 'logs'}"))


def judge_says(messages):
    """A label (or none) by the length of the judge's prompt: every class, and invalid."""
    return ("Label: N", "Label: OB", "Reasoning.\nLabel: BB", "unsure")[
        len(messages[-1]["content"]) % 4]


def test_the_detection_task_sends_detects_requests_and_gives_its_metrics(tmp_path):
    from benevaudit.pipelines import detect

    chosen = ["data=tiny", "detector=judge_plain", "detector.mode=generate", "eval.limit=24"]
    subprocess.run([sys.executable, "detect.py", *chosen, "dry_run=true", "logger=none",
                    "llm_cache=null", f"hydra.run.dir={tmp_path / 'dry'}"],
                   cwd=ROOT, check=True, capture_output=True)
    recorded = [json.loads(line) for line in
                (tmp_path / "dry" / "requests.jsonl").read_text().splitlines()]
    model, calls = mock_model(judge_says)
    log = inspect_eval("benevaudit/detection", model, tmp_path / "logs", data="tiny", limit=24)
    same_requests(recorded, calls)
    assert len(log.samples) == len(recorded) == 9 and {r["max_tokens"] for r in recorded} == {2000}
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    replies = {s.id: s.output.completion for s in log.samples}
    assert {judge_says([{"content": r["messages"][-1]["content"]}]) for r in recorded} == set(
        replies.values()) and shown["detect/n_invalid"] > 0
    # detect.py's judge answers each dialogue, in its order, with the reply Inspect logged
    answers = ",".join(json.dumps(replies[r["id"]]) for r in recorded)
    metrics = detect.run(compose_run("detect", tmp_path, "detect", *chosen,
                                     "detector.llm.backend=scripted",
                                     f"+detector.llm.responses=[{answers}]"))
    equal_metrics(shown, metrics)
    assert "trigger/TR_BB" in shown and "test/macro_f1" in shown
