"""The FairMT-Bench recipe: ``make reproduce`` (scripts/reproduce.sh) runs it between CoBia and
FairDialogue, and reports on its sweep, only when FAIRMT names a clone of the release; the
recipe itself takes the clone as FAIRMT_DATA. Checked on the commands the script prints with
ECHO_ONLY=1 (no model runs)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "experiments" / "fairmt" / "run.sh"


def printed(tmp: Path, **env: str) -> list[list[str]]:
    env = {**{k: v for k, v in os.environ.items() if k not in ("SCALE", "CORPUS", "FAIRMT")},
           "ECHO_ONLY": "1", "REPRO_DIR": str(tmp / "repro"), **env}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "reproduce.sh")], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return [shlex.split(line) for line in proc.stdout.splitlines() if line.strip()]


def recipe_of(words: list[str]) -> str | None:
    return next((w for w in words if w.endswith(".sh")), None) if words[0] == "env" else None


@pytest.mark.parametrize("scale, args", [
    ("embedded", ["limit=1", "probe.sampling.max_tokens=32"]),
    ("paper", ["hydra/launcher=submitit_slurm"])])
def test_reproduce_runs_fairmt_after_cobia_and_reports_on_it_when_given_a_clone(tmp_path,
                                                                               scale, args):
    clone = tmp_path / "FairMT-bench"
    lines = printed(tmp_path, FAIRMT=str(clone), SCALE=scale, CORPUS="/c")
    recipes = [r for r in map(recipe_of, lines) if r]
    at = recipes.index("experiments/fairmt/run.sh")
    assert recipes[at - 1] == "experiments/cobia/run.sh"
    assert recipes[at + 1] == "experiments/fairdialogue/table2.sh"
    words = next(w for w in lines if recipe_of(w) == "experiments/fairmt/run.sh")
    env = dict(w.split("=", 1) for w in words[1:words.index("bash")])
    out = tmp_path / "repro"
    assert env["FAIRMT_DATA"] == str(clone) and env["FAIRMT_DIR"] == str(out / "fairmt")
    assert env["SCALE"] == scale and words[words.index("bash") + 2:] == args
    runs = next(w for line in lines if "report.py" in line for w in line
                if w.startswith("runs="))
    assert f"'{out / 'fairmt' / 'sweep'}'" in runs


def test_reproduce_skips_fairmt_without_a_clone_and_says_how_to_add_it(tmp_path):
    lines = printed(tmp_path)
    assert "experiments/fairmt/run.sh" not in [recipe_of(w) for w in lines]
    assert any(w[:2] == ["FairMT-Bench", "skipped:"] for w in lines)
    runs = next(w for line in lines if "report.py" in line for w in line
                if w.startswith("runs="))
    assert str(tmp_path / "repro" / "fairmt") not in runs


def test_the_recipe_is_valid_bash_and_refuses_an_unknown_scale(tmp_path):
    assert subprocess.run(["bash", "-n", str(RECIPE)]).returncode == 0
    proc = subprocess.run(["bash", str(RECIPE)], env={**os.environ, "SCALE": "huge",
                                                      "FAIRMT_DIR": str(tmp_path / "out")},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "error: SCALE=huge; valid: embedded, paper" in proc.stderr
    assert "FAIRMT_DATA is not set: running on the stand-in" in proc.stderr
