"""probe.py killed with SIGKILL mid-run, then rerun: a FairDialogue feedback run of a target
behind an OpenAI-compatible server ends with the same responses as an uninterrupted run, and
no request the server already answered is sent again (each reply is cached as it arrives).

The server is a local stdlib HTTP server answering as the openai library's types define, a
little slowly (so the kill lands mid-run); the probe, the client and the cache are the real ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


class Target:
    """Answers every chat request "No, not at this time." after 0.15 s; counts each request
    (messages and seed) it answered."""

    def __init__(self) -> None:
        self.answered: Counter[str] = Counter()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(0.15)
                reply = json.dumps({
                    "id": "c", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant", "content": "No, not at this time."}}],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
                outer.answered[json.dumps([body["messages"], body["seed"]])] += 1

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def start(tmp: Path, run: str, cache: Path, url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "WANDB_MODE": "offline"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "probe.py"), "probe=fairdialogue_feedback",
         f"paths.root_dir={tmp}", f"hydra.run.dir={tmp / run}", "progress=false",
         "logger=none", f"llm_cache={cache}", "limit=2", "probe.tasks=[award]",
         "target.llm.backend=openai", f"++target.llm.base_url={url}", "++target.llm.model=m",
         "++target.llm.concurrency=1", "++target.llm.api_key_env=null",
         "target.llm.device=null", "target.llm.batch_size=null"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_probe_killed_at_several_points_resumes_to_the_same_responses(tmp_path) -> None:
    reference_target = Target()
    ref = start(tmp_path, "reference", tmp_path / "ref-cache", reference_target.url)
    assert ref.wait(timeout=600) == 0, ref.communicate()[1][-2000:]
    total = sum(reference_target.answered.values())
    target = Target()
    for kill_at in (3, total // 2, total - 2):          # early, mid-way, near the end
        proc = start(tmp_path, f"killed-{kill_at}", tmp_path / "cache", target.url)
        while sum(target.answered.values()) < kill_at and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not (tmp_path / f"killed-{kill_at}" / "_COMPLETE").exists()
    final = start(tmp_path, "final", tmp_path / "cache", target.url)
    assert final.wait(timeout=600) == 0, final.communicate()[1][-2000:]
    # a cached reply is never asked again; the one request in flight when a process is killed
    # (concurrency 1) may have been answered without reaching the cache, and is asked again
    # equal requests of one wave (dialogues that share an opening turn) are each sent, in
    # the uninterrupted run too: only a count beyond the reference's is a request sent again
    resent = sum(max(0, n - reference_target.answered[key])
                 for key, n in target.answered.items())
    assert resent <= 3, f"{resent} requests sent again over 3 kills"
    assert set(target.answered) == set(reference_target.answered)
    columns = [c for c in pd.read_parquet(tmp_path / "reference" / "responses.parquet").columns]
    want = pd.read_parquet(tmp_path / "reference" / "responses.parquet")
    got = pd.read_parquet(tmp_path / "final" / "responses.parquet")[columns]
    cached = [c for c in columns if "cached" in c]
    pd.testing.assert_frame_equal(want.drop(columns=cached), got.drop(columns=cached))
    metrics = json.loads((tmp_path / "final" / "metrics.json").read_text())
    assert metrics["llm/requests_sent"] < total and (tmp_path / "final" / "_COMPLETE").exists()
