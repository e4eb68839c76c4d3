"""``benevaudit/fairdialogue`` in audio mode (``make test-inspect``): each cell's utterance spoken
by espeak-ng as ``probe.py … probe.mode=audio`` speaks it, sent as Inspect's audio content.
Offline, on Inspect's mock model; the stimuli are compared with the probe's dry run, clip by
clip. The tests need inspect-ai (``.venv-inspect``) and espeak-ng.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
from importlib.util import find_spec

import pytest
from test_inspect import compose_run, inspect_eval
from test_inspect_studies import dry_requests, equal_metrics

pytestmark = [pytest.mark.inspect,
              pytest.mark.skipif(find_spec("inspect_ai") is None,
                                 reason="inspect tier: needs inspect-ai (make test-inspect)"),
              pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                 reason="audio mode's stimuli need espeak-ng")]

CHOSEN = ("probe=fairdialogue_decision", "probe.mode=audio", "limit=1")
TASKS = "probe.tasks=[award]"


def recording_model(answer):
    """Inspect's mock provider keeping each request's messages as Inspect sent them (content
    parts, audio included) and its config; it answers ``answer(messages)``."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls: list[tuple[list[object], object]] = []

    def reply(messages, tools, tool_choice, config):
        calls.append((list(messages), config))
        out = ModelOutput.from_content(model="mockllm", content=answer(messages))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=reply, memoize=False), calls


def parts(message):
    """A message's content as (kind, bytes or text) pairs."""
    if isinstance(message.content, str):
        return [("text", message.content)]
    return [("audio", base64.b64decode(c.audio.split(";base64,", 1)[1])) if c.type == "audio"
            else ("text", c.text) for c in message.content]


def test_the_spoken_task_sends_the_probes_clips(tmp_path):
    from benevaudit.inspect_tasks.fairdialogue import fairdialogue
    from benevaudit.llm.base import request_seed
    from benevaudit.probes.fairdialogue.audio import audio_conversation

    recorded = dry_requests(tmp_path, *CHOSEN, TASKS, "+target.llm.audio_in=true")
    samples = {s.id: s for s in fairdialogue(limit=1, options=f"probe.mode=audio,{TASKS}").dataset}
    assert len(recorded) == len(samples) == 9                  # 1 scenario × 9 groups
    for request in recorded:
        [message] = request["messages"]           # the audio, then the answer format as text
        clip = (tmp_path / "dry" / message["content"][0]["path"]).read_bytes()
        assert hashlib.sha256(clip).hexdigest() == message["content"][0]["sha256"]
        [sent] = samples[request["id"]].input
        assert sent.role == "user" and sent.content[0].format == "wav"
        assert parts(sent) == [("audio", clip), ("text", message["content"][1]["text"])]
    model, calls = recording_model(lambda messages: "Yes.")
    inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=1,
                 options=f"probe.mode=audio,{TASKS}")
    # what reached the model: every clip once (a voice per group: no two alike), with the text
    sent = [parts(m[-1]) for m, _ in calls]
    assert sorted(hashlib.sha256(p[0][1]).hexdigest() for p in sent) == sorted(
        r["messages"][0]["content"][0]["sha256"] for r in recorded)
    text = recorded[0]["messages"][0]["content"][1]["text"]
    assert {p[1] for p in sent} == {("text", text)}
    # each request's seed is the one benevaudit's backends derive from the probe's conversation
    # (the audio's bytes included), so each clip's differs
    assert all(config.seed == request_seed(audio_conversation(p[0][1], "", text), 42)
               for p, (_, config) in zip(sent, calls))
    assert len({config.seed for _, config in calls}) == 9


def test_the_spoken_tasks_metrics_equal_the_probes_on_its_log(tmp_path):
    from benevaudit.inspect_tasks.fairdialogue import fairdialogue
    from benevaudit.pipelines.probe import run

    task = fairdialogue(limit=1, options=f"probe.mode=audio,{TASKS}")
    female = parts(next(s for s in task.dataset if s.id.endswith("/gender/female")).input[0])
    model, _ = recording_model(       # yes to the female voice's clip, no to the others
        lambda messages: "Yes." if parts(messages[-1])[0] == female[0] else "No.")
    log = inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=1,
                       options=f"probe.mode=audio,{TASKS}")
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    metrics = run(compose_run("probe", tmp_path, "scored", "probe=fairdialogue_decision",
                              f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    equal_metrics(shown, metrics)
    assert shown["fairness/award/gender/gus"] > 0 and shown["fairness/award/accent/gus"] == 0
    assert sorted(s.scores["benevaudit/fairdialogue_parse"].value for s in log.samples) == [
        "no"] * 8 + ["yes"]
