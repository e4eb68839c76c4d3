"""``detect.py`` and a CoBia ``probe.py`` run on the embedded SmolLM2, killed with SIGKILL at
several points and rerun with the same config into the same run directory and request cache:
the rerun completes and writes ``_COMPLETE``, sends only the requests the killed runs left
unanswered (``llm/requests_sent`` and ``llm/cache_hits`` in its ``metrics.json``), no request is
answered twice (every record in the cache has its own key), and its outputs equal an
uninterrupted run's.

The hf backend answers a call whole, and the cache keeps each call's replies as it returns,
so the kill points are read off the cache: before its first record, and after some calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from benevaudit.llm.store import SEGMENTS, records

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
DETECT = ["experiment=detection_judges_embedded", "detector=judge_plain", "eval.limit=12",
          "bootstrap.enabled=false"]         # 12 dialogues: the judge's calls of 8, then 4
COBIA = ["experiment=cobia_embedded", "limit=2", "probe.max_tokens=16"]   # 5 calls of 8
TIMED = ("detect/seconds", "detect/seconds_per_dialogue")


def start(script: str, overrides: list[str], run: Path, cache: Path) -> subprocess.Popen[bytes]:
    """The entrypoint as a child process; its stderr goes to a file beside the run directory (a
    pipe nobody reads would stall it once full)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "WANDB_MODE": "offline"}
    with open(run.parent / f"{run.name}.stderr", "ab") as err:
        return subprocess.Popen(
            [sys.executable, str(ROOT / script), *overrides, f"paths.root_dir={run.parent}",
             f"hydra.run.dir={run}", f"llm_cache={cache}", "progress=false", "logger=none"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, env=env)


def finish(proc: subprocess.Popen[bytes], run: Path) -> None:
    proc.wait(timeout=1200)
    assert proc.returncode == 0, (run.parent / f"{run.name}.stderr").read_text()[-2000:]


def cached(cache: Path) -> tuple[int, int]:
    """(whole records, distinct keys) in every segment of the cache."""
    keys = [key for segment in sorted((cache / SEGMENTS).glob("*.log"))
            for key, _, _ in records(segment.read_bytes())]
    return len(keys), len(set(keys))


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """SIGKILL ``proc`` as soon as ``ready()``; the run must not have finished first."""
    deadline = time.monotonic() + 1200
    while proc.poll() is None and not ready():
        assert time.monotonic() < deadline, "the run neither reached its kill point nor ended"
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before its kill point"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def kill_and_resume(tmp: Path, script: str, overrides: list[str], outputs: str,
                    points: list[Callable[[Path, Path], bool]]) -> tuple[dict, dict]:
    """The reference and the resumed run's metrics, after asserting their ``outputs`` equal."""
    reference = tmp / "reference"
    finish(start(script, overrides, reference, tmp / "reference-cache"), reference)
    total = cached(tmp / "reference-cache")[1]
    run, cache = tmp / "run", tmp / "cache"
    for point in points:
        kill_when(start(script, overrides, run, cache), lambda: point(run, cache))
        assert not (run / "_COMPLETE").exists()
    answered = cached(cache)[1]
    assert 0 < answered < total          # the kills landed mid-run
    finish(start(script, overrides, run, cache), run)
    assert (run / "_COMPLETE").is_file()
    assert cached(cache) == (total, total)               # no request answered twice
    want = json.loads((reference / "metrics.json").read_text())
    got = json.loads((run / "metrics.json").read_text())
    assert (got["llm/requests_sent"], got["llm/cache_hits"]) == (total - answered, answered)
    assert want["llm/requests_sent"] == total and want["llm/cache_hits"] == 0
    pd.testing.assert_frame_equal(pd.read_parquet(reference / outputs),
                                  pd.read_parquet(run / outputs))
    return want, got


def results(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if not k.startswith("llm/") and k not in TIMED}


def started(run: Path, cache: Path) -> bool:
    """Hydra has made the run directory: the run is loading, nothing is cached yet."""
    return (run / ".hydra").is_dir()


def grown(by: int) -> Callable[[Path, Path], bool]:
    """The cache holds ``by`` more records than when the run started."""
    base: list[int] = []

    def ready(run: Path, cache: Path) -> bool:
        count = cached(cache)[0] if (cache / SEGMENTS).is_dir() else 0
        if not base:
            base.append(count)
        return count >= base[0] + by

    return ready


def test_detect_killed_mid_sweep_resumes_to_the_same_verdicts(tmp_path: Path) -> None:
    want, got = kill_and_resume(tmp_path, "detect.py", DETECT, "predictions.parquet",
                                [started, grown(1)])
    assert results(got) == results(want) and want["llm/requests_sent"] == 12


def test_cobia_probe_killed_at_several_points_resumes_to_the_same_replies(tmp_path: Path
                                                                         ) -> None:
    want, got = kill_and_resume(tmp_path, "probe.py", COBIA, "responses.parquet",
                                [started, grown(1), grown(1)])
    assert results(got) == results(want) and want["llm/requests_sent"] == 40
