"""``kill -9`` during ``generate.py`` at several points, then rerun: every id exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benevaudit.corpus import read_corpus
from benevaudit.generation.grid import iter_conditions

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 12_000


def _start(out: Path, run_dir: Path) -> subprocess.Popen:
    cmd = [sys.executable, str(ROOT / "generate.py"), "generator=scripted", f"limit={LIMIT}",
           f"out_dir={out}", "batch_size=150", "shard_size=1000", "progress=false",
           f"hydra.run.dir={run_dir}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _kill_when(proc: subprocess.Popen, ready: Callable[[], bool], timeout: float = 120) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()``; False if it finished first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    proc.kill()
    raise AssertionError("generate.py neither reached the kill point nor finished")


@pytest.mark.slow
def test_kill_nine_at_several_points_then_resume_writes_each_id_once(tmp_path):
    out = tmp_path / "corpus"
    journal_bytes = lambda: sum(p.stat().st_size for p in out.glob("*.journal"))  # noqa: E731
    kill_points = [
        lambda: (out / "manifest.json").is_file(),                   # before or at the first batch
        lambda: journal_bytes() > 200_000,                           # mid-journal
        lambda: len(list(out.glob("shard-*.parquet"))) >= 4,         # after several sealed shards
        lambda: len(list(out.glob("shard-*.parquet"))) >= 8 and journal_bytes() > 0,
    ]
    killed = 0
    for i, point in enumerate(kill_points):
        killed += _kill_when(_start(out, tmp_path / f"run{i}"), point)
        assert not (out / "_COMPLETE").exists()
    assert killed >= 3  # the kill points were reached, not skipped by a finished run
    final = _start(out, tmp_path / "final")
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()[-2000:]
    assert (out / "_COMPLETE").is_file() and not list(out.glob("*.journal"))
    ids = [d.id for d in read_corpus(out)]  # read_corpus also rejects duplicate ids
    assert sorted(ids) == sorted(c.id for c in iter_conditions(limit=LIMIT))
