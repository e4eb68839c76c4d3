"""A benevaudit task run by Inspect AI against a real model behind an OpenAI-compatible server:
the embedded LLM (SmolLM2-135M on the hf backend, CPU) answering chat completions on 127.0.0.1,
asked through Inspect's ``openai-api`` provider with ``base_url``. The same requests sent by
``probe.py`` with ``target=openai`` at the same server get the same replies (greedy), and the
probe scoring the Inspect log gives the task's metrics. Offline: the server is a stdlib HTTP
server in the test (``make test-inspect``; needs inspect-ai, in ``.venv-inspect``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pandas as pd
import pytest
from raw_server import RawServer, as_json, completion
from test_inspect import compose_run, inspect_eval
from test_inspect_studies import equal_metrics

pytestmark = [pytest.mark.inspect,
              pytest.mark.skipif(find_spec("inspect_ai") is None,
                                 reason="inspect tier: needs inspect-ai (make test-inspect)")]
OPTIONS = "probe.tasks=[award,interview]"


@pytest.fixture(scope="module")
def served() -> Iterator[RawServer]:
    """The embedded LLM answering ``/v1/chat/completions`` with each request's own decoding."""
    from benevaudit.llm import Sampling, build_chat_model

    model = build_chat_model("hf", model="embedded:smollm2", device="cpu")

    def answer(path: str, body: dict[str, Any], n: int) -> tuple[int, str, bytes]:
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        sampling = Sampling(temperature=float(body.get("temperature", 1.0)),
                            top_p=float(body.get("top_p", 1.0)), max_tokens=cap,
                            seed=int(body.get("seed", 0)))
        [reply] = model.chat([body["messages"]], sampling)
        return as_json(completion(reply.text))

    server = RawServer(answer)
    yield server
    server.close()
    model.close()


def request_options(bodies: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """Each request's decoding (temperature, top_p, reply cap, seed), by its messages."""
    return {json.dumps(b["messages"], sort_keys=True): (
        b.get("temperature"), b.get("top_p"), b.get("max_completion_tokens") or
        b.get("max_tokens"), b.get("seed")) for b in bodies}


def test_the_fairdialogue_task_on_a_served_model_answers_as_probe_py(served, tmp_path):
    from inspect_ai.model import get_model

    from benevaudit.pipelines.probe import run

    model = get_model("openai-api/local/smollm2", base_url=served.url, api_key="unused",
                      memoize=False)
    log = inspect_eval("benevaudit/fairdialogue", model, tmp_path / "logs", limit=1,
                       options=OPTIONS)
    sent_by_inspect = list(served.bodies)
    assert len(log.samples) == len(sent_by_inspect) == 18      # 2 tasks × 9 groups
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    # probe.py asks the same server the same requests (messages, decoding, each request's
    # seed): the same greedy replies
    asked = run(compose_run("probe", tmp_path, "asked", "probe=fairdialogue_decision", "limit=1",
                            OPTIONS, "target=openai",
                            "target.llm.model=smollm2", f"target.llm.base_url={served.url}",
                            "target.llm.api_key_env=null"))
    sent_by_probe = served.bodies[len(sent_by_inspect):]
    assert request_options(sent_by_inspect) == request_options(sent_by_probe)
    replies = {s.id: s.output.completion for s in log.samples}
    rows = pd.read_parquet(tmp_path / "asked" / "responses.parquet")
    assert {f"{r.task}/{r.item}/{r.attribute}/{r.group}": r.answer
            for r in rows.itertuples()} == replies
    assert any(text.strip() for text in replies.values())
    equal_metrics(shown, asked)
    scored = run(compose_run("probe", tmp_path, "scored", "probe=fairdialogue_decision",
                             f"probe.answers.inspect_log={tmp_path / 'logs'}"))
    equal_metrics(shown, scored)
