"""``make reproduce`` (scripts/reproduce.sh): every study's recipe in turn at one scale, then one
report over the runs each recipe reports on; a rerun skips the studies that finished. Checked
on the commands it prints with ECHO_ONLY=1 (no model runs)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "reproduce.sh"
RECIPES = {  # folder under REPRO_DIR -> (recipe, the variable that names its folder)
    "finetune_audit": ("experiments/finetune_audit/run.sh", "AUDIT_DIR"),
    "detection": ("experiments/detection/run.sh", "DETECT_DIR"),
    "cobia": ("experiments/cobia/run.sh", "COBIA_DIR"),
    "fairdialogue/table2": ("experiments/fairdialogue/table2.sh", "FD_DIR"),
    "fairdialogue/table3": ("experiments/fairdialogue/table3.sh", "FD_DIR"),
    "dataset_analysis": ("experiments/dataset_analysis/run.sh", "ANALYSIS_DIR"),
}
REPORTED = ["finetune_audit", "detection", "cobia/sweep", "fairdialogue/table2/sweep",
            "fairdialogue/table3/sweep", "dataset_analysis/analysis"]


def reproduce(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ECHO_ONLY": "1", "REPRO_DIR": str(tmp_path / "repro"), **env}
    for key in ("SCALE", "CORPUS", "TARGETS", "LAUNCHER"):
        if key not in env or not env[key]:
            env.pop(key, None)
    return subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=30)


def commands(proc: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """The printed commands by what they run: a recipe's folder, or "report"."""
    assert proc.returncode == 0, proc.stderr
    found = {}
    for line in proc.stdout.splitlines():
        words = shlex.split(line)
        if words and words[0] == "env":
            recipe = next(w for w in words if w.endswith(".sh"))
            folder = next(k for k, (r, _) in RECIPES.items() if r == recipe)
            found[folder] = words
        elif "report.py" in words:
            found["report"] = words
    return found


def env_of(words: list[str]) -> dict[str, str]:
    return dict(w.split("=", 1) for w in words[1:words.index("bash")])


def args_of(words: list[str]) -> list[str]:
    return words[next(i for i, w in enumerate(words) if w.endswith(".sh")) + 1:]


def test_the_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_embedded_runs_every_recipe_then_one_report_over_all_of_them(tmp_path):
    proc = reproduce(tmp_path, SCALE="")
    out = tmp_path / "repro"
    found = commands(proc)
    assert list(found) == [*RECIPES, "report"]  # in this order, the report last
    for folder, (recipe, var) in RECIPES.items():
        env = env_of(found[folder])
        assert env[var] == str(out / folder)
        assert (ROOT / recipe).is_file()
        if folder != "finetune_audit":
            assert env["SCALE"] == "embedded"
    assert env_of(found["detection"])["FINETUNED"] == str(out / "finetune_audit" / "baseline")
    assert env_of(found["detection"])["LIMIT"] == "6"  # every detection run on 6 dialogues
    assert env_of(found["cobia"])["TARGETS"] == "embedded" and "COBIA_DATA" not in proc.stdout
    assert args_of(found["cobia"]) == ["limit=3", "probe.max_tokens=48"]
    assert args_of(found["fairdialogue/table2"]) == ["limit=2"]
    for folder in ("finetune_audit", "detection", "dataset_analysis"):  # their embedded pins
        assert args_of(found[folder]) == [], folder
    report = found["report"]
    runs = next(w for w in report if w.startswith("runs="))
    assert runs == "runs=[" + ",".join(f"'{out / r}'" for r in REPORTED) + "]"
    assert f"hydra.run.dir={out / 'report'}" in report
    assert proc.stdout.strip().endswith(f"report: {out / 'report' / 'report.html'}")


def test_paper_scale_goes_through_the_slurm_launcher_on_the_corpus(tmp_path):
    found = commands(reproduce(tmp_path, SCALE="paper", CORPUS="/data/benevdial"))
    launcher = "hydra/launcher=submitit_slurm"
    for folder in RECIPES:
        if folder != "dataset_analysis":  # one analyze.py run: no multirun to launch
            assert launcher in args_of(found[folder]), folder
        if folder != "finetune_audit":
            assert env_of(found[folder])["SCALE"] == "paper"
    for folder in ("finetune_audit", "detection", "dataset_analysis"):
        assert "data.path=/data/benevdial" in args_of(found[folder])
    assert args_of(found["finetune_audit"])[0] == "experiment=paper"
    assert env_of(found["detection"])["LIMIT"] == ""  # the pins' whole evaluation set
    assert env_of(found["cobia"])["TARGETS"] == "vllm_llama31_8b"
    local = commands(reproduce(tmp_path, SCALE="paper", CORPUS="/c",
                               LAUNCHER="hydra/launcher=submitit_local"))
    assert "hydra/launcher=submitit_local" in args_of(local["detection"])


@pytest.mark.parametrize("env,message", [
    ({"SCALE": "paper"}, "error: SCALE=paper needs CORPUS="),
    ({"SCALE": "huge"}, "error: SCALE=huge; valid: embedded, paper"),
])
def test_bad_settings_stop_before_any_recipe(tmp_path, env, message):
    proc = reproduce(tmp_path, **env)
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert proc.stdout == ""


def test_a_rerun_skips_the_studies_that_finished(tmp_path):
    for folder in ("finetune_audit", "cobia"):
        report = tmp_path / "repro" / folder / "report"
        report.mkdir(parents=True)
        (report / "report.html").write_text("<html></html>")
    proc = reproduce(tmp_path)
    found = commands(proc)
    assert list(found) == ["detection", "fairdialogue/table2", "fairdialogue/table3",
                           "dataset_analysis", "report"]
    assert f"done: {tmp_path / 'repro' / 'cobia'}" in proc.stdout


def pool_and_guards(tmp_path: Path, **env: str) -> tuple:
    """(the Figure 5 pool run's config, the first guard run's, Table 3's command) as make
    reproduce's detection recipe starts them."""
    from recipe_fixtures import jobs

    detection = commands(reproduce(tmp_path, **env))["detection"]
    recipe_env = {**os.environ, **env_of(detection), "ECHO_ONLY": "1"}
    out = subprocess.run(["bash", str(ROOT / "experiments/detection/run.sh"),
                          *args_of(detection)], env=recipe_env, capture_output=True, text=True,
                         timeout=30, check=True).stdout
    lines = [shlex.split(line) for line in out.splitlines() if "detect.py" in line]
    runs = {Path(next(w for w in c if w.startswith("hydra."))).name: c for c in lines}
    (pool,) = jobs(runs["figure5_pool"])
    guards = jobs(runs["sweep"])[0]
    (table3,) = [shlex.split(line) for line in out.splitlines() if "table3.py" in line]
    return pool, guards, table3


def test_figure_5_pool_run_is_in_the_detection_recipe_make_reproduce_starts(tmp_path):
    """make reproduce's detection recipe, as it is started, runs Granite Guardian 4.1 once on the
    20% pool (eval.fraction=0.2) at the recipe's size, on the scripted corpus every other run
    reads; Table 3 is printed from its own runs, not the pool's."""
    pool, guards, table3 = pool_and_guards(tmp_path)
    assert pool.detector.name == "granite_guardian_4_1" and pool.eval.fraction == 0.2
    assert pool.eval.limit == guards.eval.limit == 6                     # the recipe's size
    assert pool.data == guards.data and pool.data.kind == "embedded"   # the scripted corpus
    assert pool.bootstrap.pool_fraction == 0.2 and max(pool.bootstrap.fractions) == 0.2
    assert guards.eval.fraction == 0.1
    assert pool.detector.mode == "score"   # SmolLM2 writes no <score>: generated, all invalid
    assert not any(w.endswith("figure5_pool") for w in table3)
    assert any(w.endswith("/sweep") for w in table3)
    (tmp_path / "p").mkdir()
    paper, paper_guards, _ = pool_and_guards(tmp_path / "p", SCALE="paper", CORPUS="/c")
    assert paper.detector.mode == "generate" and paper.eval.fraction == 0.2   # the guard's mode
    assert paper.eval.limit is None and paper.data == paper_guards.data
    assert paper.data.path == "/c"


def test_external_validity_runs_on_the_audit_baseline_when_the_releases_are_given(tmp_path):
    edos, dia = tmp_path / "edos", tmp_path / "dia"
    proc = reproduce(tmp_path, SCALE="", EDOS=str(edos), DIASAFETY=str(dia))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "repro"
    lines = [shlex.split(line) for line in proc.stdout.splitlines()]
    recipe = [w for w in lines if "experiments/external_validity/run.sh" in w]
    assert len(recipe) == 1
    env = env_of(recipe[0])
    assert env["EDOS"] == str(edos) and env["DIASAFETY"] == str(dia)
    assert env["CLASSIFIER"] == str(out / "finetune_audit" / "baseline")
    assert env["EV_DIR"] == str(out / "external_validity")
    report = next(w for w in lines if "report.py" in w)
    runs = next(w for w in report if w.startswith("runs="))
    assert runs.endswith(f",'{out / 'external_validity'}']")


def test_without_the_releases_external_validity_is_skipped_with_a_reason(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("EDOS", "DIASAFETY")}
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "ECHO_ONLY": "1", "REPRO_DIR": str(tmp_path / "r")},
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "external validity skipped: set EDOS=" in proc.stdout
    assert "external_validity/run.sh" not in proc.stdout
