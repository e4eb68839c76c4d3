"""Scale-out through existing engines: Lightning DDP (gloo on CPU) and Hydra multirun."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from config_fixtures import option

ROOT = Path(__file__).resolve().parents[1]


def run_train(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_ddp_two_processes_test_each_dialogue_once(tmp_path):
    run = tmp_path / "ddp"
    run_train("experiment=smoke", "trainer=ddp", "trainer.devices=2", "trainer.accelerator=cpu",
              "trainer.accumulate_grad_batches=2",  # 1 batch a step on each of 2 processes
              "trainer.max_epochs=1", f"hydra.run.dir={run}",
              f"paths.cache_dir={tmp_path / 'cache'}")
    assert (run / "train_ddp_process_1.log").exists()  # a second rank really ran
    preds = pd.read_parquet(run / "predictions.parquet")
    metrics = json.loads((run / "metrics.json").read_text())
    assert preds["id"].is_unique and len(preds) == metrics["test/n"] == 9
    assert metrics["train/effective_batch"] == 16 and metrics["train/world_size"] == 2
    assert metrics["train/accumulate_grad_batches"] == 1


@pytest.mark.slow
def test_multirun_gives_separate_runs(tmp_path):
    sweep = tmp_path / "sweep"
    run_train("-m", "seed=1,2", "experiment=smoke", "model=tiny_bert", "trainer.max_epochs=1",
              f"hydra.sweep.dir={sweep}", f"paths.cache_dir={tmp_path / 'cache'}")
    runs = sorted(p for p in sweep.iterdir() if (p / "metrics.json").exists())
    assert [p.name for p in runs] == ["0", "1"]
    seeds = [json.loads((p / ".hydra" / "config.yaml").read_text().split("seed: ")[1].split()[0])
             for p in runs]
    assert seeds == [1, 2]
    assert all((p / "predictions.parquet").exists() for p in runs)
    # the sweep callback ends the multirun with the comparison in the sweep directory
    table = pd.read_csv(sweep / "runs.csv")
    assert sorted(table["seed"]) == [1, 2] and set(table["status"]) == {"ok"}
    assert "data:image/png;base64," in (sweep / "report.html").read_text()


def test_a_failed_job_fails_alone_and_the_sweep_report_lists_it(tmp_path):
    """A user error in one job is one line for that job; the other jobs still run, the sweep
    exits non-zero, and its report lists the failed runs with the error as the reason."""
    sweep = tmp_path / "sweep"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "train.py", "-m", "seed=-1,-2", "experiment=smoke",
                           "logger=none", f"hydra.sweep.dir={sweep}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")]
    assert errors == ["error: seed=-1: expected a non-negative integer",
                      "error: seed=-2: expected a non-negative integer"]
    table = pd.read_csv(sweep / "runs.csv")
    assert list(table["status"]) == ["incomplete", "incomplete"]
    report = (sweep / "report.md").read_text()
    assert "`0` (incomplete): no metrics.json: failed: seed=-1: expected a non-negative" in report
    assert "`1` (incomplete): no metrics.json: failed: seed=-2" in report


def test_bad_corpus_is_one_line_and_non_zero(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "label": "N", "role": "r", "generator": "g", '
                   '"user": {"age": "x", "gender": "y", "race": "z", "ability": "w"}, '
                   '"agent": null, "turns": [{"speaker": "robot", "text": "hi"}]}\n')
    proc = subprocess.run([sys.executable, "train.py", "data=corpus", f"data.path={bad}",
                           f"hydra.run.dir={tmp_path / 'run'}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert lines[-1] == (f"error: {bad}:line 1: field 'turns[0].speaker': expected one of "
                         "['user', 'agent'], got 'robot'")
    assert "Traceback" not in proc.stderr


def test_bad_attribution_setting_fails_before_training(tmp_path):
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "train.py", "experiment=smoke",
                           "attribution.methods=[rollout,lime]", f"hydra.run.dir={run}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: attribution.methods=['rollout', 'lime']: expected a non-empty list of rollout, "
        "rollout_norm, integrated_gradients (the first writes cue_lexicon.json)")
    assert not (run / "checkpoints").exists() and not (run / "metrics.json").exists()


def test_attribution_spec_cases():
    from benevaudit.audit.attribution.spec import AttributionSpec
    from benevaudit.errors import ConfigError

    good = {**option("attribution", "rollout"), "target": "BB", "cache_dir": None,
            "methods": ["rollout_norm", "integrated_gradients"]}
    assert AttributionSpec.of(good, "attribution").methods == ["rollout_norm",
                                                               "integrated_gradients"]
    for key, value, says in [("methods", [], "methods"), ("target", "maybe", "target"),
                             ("split", "dev", "split"), ("top_k", 0, "top_k"),
                             ("batch_size", 2.5, "batch_size"),
                             ("max_batch_tokens", "lots", "max_batch_tokens")]:
        with pytest.raises(ConfigError, match=f"attribution.{says}="):
            AttributionSpec.of({**good, key: value}, "attribution")


