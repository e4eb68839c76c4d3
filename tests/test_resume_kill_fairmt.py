"""probe.py probe=fairmt killed with SIGKILL mid-run, then rerun: the five turn waves and the
judge's wave, both behind an OpenAI-compatible server, end with the same responses and verdicts
as an uninterrupted run, and no request the server already answered is sent again (each reply
is cached as it arrives, so a rerun resumes wave by wave).

The server (``test_resume_kill_llm.Target``) answers every request a little slowly, so the
kill lands mid-run; the probe, the client and the cache are the real ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from test_resume_kill_llm import Target

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def start(tmp: Path, run: str, cache: Path, url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "WANDB_MODE": "offline"}
    server = [f"++{block}.{key}={value}" for block in ("target.llm", "probe.judge.llm")
              for key, value in (("base_url", url), ("model", "m"), ("concurrency", 1),
                                 ("api_key_env", "null"), ("device", "null"),
                                 ("batch_size", "null"))]
    return subprocess.Popen(
        [sys.executable, str(ROOT / "probe.py"), "probe=fairmt", f"paths.root_dir={tmp}",
         f"hydra.run.dir={tmp / run}", "progress=false", "logger=none", f"llm_cache={cache}",
         "limit=2", "probe.tasks=[Anaphora_Ellipsis,Fixed_Format]",
         "target.llm.backend=openai", "probe.judge.llm.backend=openai", *server],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_fairmt_killed_at_several_points_resumes_to_the_same_verdicts(tmp_path) -> None:
    reference_target = Target()
    ref = start(tmp_path, "reference", tmp_path / "ref-cache", reference_target.url)
    assert ref.wait(timeout=600) == 0, ref.communicate()[1][-2000:]
    total = sum(reference_target.answered.values())
    assert total == 4 * 5 + 4           # 4 dialogues x 5 turns, each fifth reply judged
    target = Target()
    for kill_at in (3, total // 2, total - 2):          # a turn wave, mid-way, the judge's
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
    want = pd.read_parquet(tmp_path / "reference" / "responses.parquet")
    got = pd.read_parquet(tmp_path / "final" / "responses.parquet")[list(want.columns)]
    pd.testing.assert_frame_equal(want, got)
    assert set(got["verdict"]) == {"not_biased"} and len(got) == 4
    metrics = json.loads((tmp_path / "final" / "metrics.json").read_text())
    assert metrics["llm/requests_sent"] < total and (tmp_path / "final" / "_COMPLETE").exists()
