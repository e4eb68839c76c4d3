"""experiments/external_validity/run.sh: the commands it runs (ECHO_ONLY=1, no model runs)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "external_validity" / "run.sh"


def recipe(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("EDOS", "DIASAFETY", "CLASSIFIER")}
    return subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30, env={**base, "ECHO_ONLY": "1",
                                           "EV_DIR": str(tmp_path / "ev"), **env})


def commands(proc: subprocess.CompletedProcess) -> list[list[str]]:
    assert proc.returncode == 0, proc.stderr
    return [shlex.split(line) for line in proc.stdout.splitlines()
            if ".venv/bin/python" in line or "python" in line.split()[0]]


def test_embedded_runs_the_three_parts_then_the_report(tmp_path):
    edos, dia = tmp_path / "edos", tmp_path / "dia"
    found = commands(recipe(tmp_path, EDOS=str(edos), DIASAFETY=str(dia)))
    scripts = [w[1] for w in found]
    assert scripts == ["train.py", "evaluate.py", "train.py", "detect.py", "detect.py",
                       "detect.py", "detect.py", "detect.py", "report.py"]
    transfer = found[0]
    assert "external=[edos,diasafety]" in transfer and f"external.edos.data.path={edos}" in transfer
    assert "external.edos.limit=477" in transfer
    assert "data.strata=true" in found[1]
    in_domain = found[2]
    assert "data=edos" in in_domain and "split.strategy=existing" in in_domain
    judge = found[4]
    assert "detector.demographics=false" in judge and "eval.limit=477" in judge
    guards = found[5:8]
    assert all("dry_run=true" in g for g in guards)      # no 8B guard on a CPU: sized only
    assert [next(w for w in g if w.startswith("detector.unit=")) for g in guards[1:]] == [
        "detector.unit=utterance", "detector.unit=exchange"]
    assert found[-1][2] == f"runs={tmp_path / 'ev'}"


def test_a_given_classifier_is_scored_not_trained(tmp_path):
    found = commands(recipe(tmp_path, EDOS="e", DIASAFETY="d", CLASSIFIER=str(tmp_path / "run")))
    assert [w[1] for w in found][:4] == ["evaluate.py", "evaluate.py", "evaluate.py", "train.py"]
    assert all(f"ckpt={tmp_path / 'run'}" in w for w in found[:3])


def test_missing_release_paths_stop_with_one_line(tmp_path):
    proc = recipe(tmp_path, EDOS="e")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: DIASAFETY=<a clone of the release> is required")
