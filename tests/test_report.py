"""report.py over run directories: discovery, the runs table, Table 4 with seeds and intervals,
failed runs listed, self-contained HTML, the bootstrap against an independent implementation."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, recall_score

from report_fixtures import audit_dir, predictions, write_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    root = audit_dir(tmp_path_factory.mktemp("audit") / "a1", seeds=(1, 2))
    write_run(root / "seed1" / "crashed", "evaluate", {"intervention": "shuffle"}, metrics=None)
    torn = root / "seed1" / "torn"
    torn.mkdir()
    (torn / "metrics.json").write_text('{"test/macro_f1": 0.9')
    return root


@pytest.fixture(scope="module")
def built(audit, tmp_path_factory):
    from benevaudit.pipelines.report_files import build_report

    return build_report([audit], tmp_path_factory.mktemp("out"), n_resamples=300)


def test_every_run_is_a_row_with_its_choices(audit, built):
    table = pd.read_csv(built.runs_csv)
    assert len(table) == 2 * 8 + 2                      # nested two deep, failures included
    assert {"intervention", "model", "data", "seed", "task", "status"} <= set(table.columns)
    assert "hydra/launcher" not in table.columns
    row = table[table["run"] == "seed2/evaluation/punct+random_mask"].iloc[0]
    assert (row["intervention"], row["task"], row["seed"]) == ("punct+random_mask", "evaluate", 2)
    metrics = json.loads((audit / "seed2/evaluation/punct+random_mask/metrics.json").read_text())
    assert row["test/macro_f1"] == pytest.approx(metrics["test/macro_f1"])
    assert pd.read_parquet(built.runs_parquet).shape == table.shape


def test_failed_and_torn_runs_are_listed_with_a_reason(built):
    md = built.markdown.read_text()
    assert re.search(r"`seed1/crashed` \(incomplete\): no metrics.json", md)
    assert re.search(r"`seed1/torn` \(broken\): metrics.json is half written", md)


def test_table4_rows_seeds_and_intervals(audit, built):
    (section,) = [s for s in built.sections if s.key == "finetune_audit"]
    table = section.tables[0]
    codes = [(r[0], r[1]) for r in table.rows]
    assert codes == [("clean", "—"), ("evaluation", "P"), ("evaluation", "M"),
                     ("evaluation", "P+M"), ("evaluation", "RM"), ("evaluation", "P+RM"),
                     ("training", "P+F"), ("training", "P+S+SH")]
    cell = table.rows[5][2]                               # P+RM macro-F1
    # independent: scikit-learn on each seed's predictions, then mean and sample std
    f1s = [f1_score(*[pd.read_parquet(audit / f"seed{s}/evaluation/punct+random_mask/"
                                      "predictions.parquet")[c] for c in ("label", "pred")],
                    average="macro") for s in (1, 2)]
    assert cell.n == 2
    assert cell.mean == pytest.approx(np.mean(f1s), abs=1e-6)
    assert cell.std == pytest.approx(np.std(f1s, ddof=1), abs=1e-6)
    assert cell.low < cell.mean < cell.high and cell.high - cell.low < 0.5
    assert f"± {cell.std:.3f} (n=2) [{cell.low:.3f}, {cell.high:.3f}]" in built.markdown.read_text()


def test_html_is_self_contained_with_every_figure(built):
    page = built.html.read_text()
    n_figures = sum(len(s.figures) for s in built.sections)
    assert n_figures == 2 * 8 + 1                          # confusion matrices + the heatmap
    assert page.count("data:image/png;base64,") == n_figures
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "run seed1/baseline" in page and "Cue lexicon of seed1/baseline" in page


def _direct_bootstrap(frame: pd.DataFrame, groups: np.ndarray, n: int, seed: int) -> list:
    """The same draws, applied row by row and scored with scikit-learn."""
    from benevaudit.metrics.resample import draw_counts

    g = groups.max() + 1
    draws = draw_counts(np.random.default_rng(seed), g, n)
    out = []
    for counts in draws:
        rows = np.concatenate([np.flatnonzero(groups == k) for k, c in enumerate(counts)
                               for _ in range(c)])
        part = frame.iloc[rows]
        out.append((f1_score(part["label"], part["pred"], average="macro",
                             labels=["N", "OB", "BB"], zero_division=0),
                    recall_score(part["label"], part["pred"], labels=["BB"], average=None,
                                 zero_division=0)[0]))
    return out


def test_bootstrap_matches_scikit_learn_on_the_same_draws(tmp_path):
    from benevaudit.report.intervals import classification_replicates, group_index

    frame = predictions(10, 0.7, seed=3)
    groups = group_index(frame)
    assert groups.max() + 1 == 10 and all(np.bincount(groups) == 3)   # triplets found
    reps = classification_replicates(frame, "test", n_resamples=25, seed=7)
    direct = _direct_bootstrap(frame, groups, 25, 7)
    assert np.allclose(reps["test/macro_f1"], [d[0] for d in direct])
    assert np.allclose(reps["test/recall_BB"], [d[1] for d in direct])
    from benevaudit.report.intervals import Rows, wanted

    frame.to_parquet(tmp_path / "p.parquet")                  # read back as plain columns
    again = classification_replicates(Rows.read(tmp_path / "p.parquet", wanted), "test", 25, 7)
    assert np.array_equal(again["test/macro_f1"], reps["test/macro_f1"])


def test_triplets_are_resampled_together():
    from benevaudit.report.intervals import classification_replicates

    frame = predictions(12, 1.0, seed=0)
    wrong = frame["generator"].index[frame.index // 3 % 2 == 1]      # every other triplet all wrong
    frame.loc[wrong, "pred"] = frame.loc[wrong, "label"].map({"N": "OB", "OB": "BB", "BB": "N"})
    acc = classification_replicates(frame, n_resamples=400)["test/accuracy"]
    assert np.allclose(acc * 12, np.round(acc * 12))                 # whole triplets: k/12
    rows_only = classification_replicates(frame.drop(columns=["role"]), n_resamples=400)
    assert not np.allclose(rows_only["test/accuracy"] * 12, np.round(rows_only["test/accuracy"] * 12))


def test_report_run_in_process(audit, tmp_path, capsys):
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.report import run

    out = tmp_path / "rep"
    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("report", overrides=[f"runs={audit}", "bootstrap.n_resamples=50",
                                           f"paths.output_dir={out}"])
    files = run(cfg)
    assert f"{out / 'report.html'}" in capsys.readouterr().out
    assert {"runs.csv", "runs.parquet", "report.html", "report.md"} <= {p.name for p in out.iterdir()}
    assert len(files.runs) == 18


@pytest.mark.slow
def test_report_cli_and_bad_path(audit, tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "report.py", f"runs={audit}", "bootstrap.n_resamples=50",
                           f"hydra.run.dir={out}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{out / 'report.html'}" in proc.stdout
    assert {"runs.csv", "runs.parquet", "report.html", "report.md"} <= {p.name for p in out.iterdir()}
    bad = subprocess.run([sys.executable, "report.py", f"runs={tmp_path / 'nope'}",
                          f"hydra.run.dir={tmp_path / 'rep2'}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode == 2 and "nope: no such directory" in bad.stderr


def test_sweep_callback_writes_the_comparison(tmp_path, capsys):
    from omegaconf import OmegaConf

    from benevaudit.pipelines.sweep_report import SweepReport

    sweep = tmp_path / "multiruns" / "2026-01-01_00-00-00"
    for job, seed in enumerate((1, 2)):
        frame = predictions(8, 0.8, seed)
        from report_fixtures import classifier_metrics

        write_run(sweep / str(job), "train", {"intervention": "none", "model": "tiny_bert"},
                  {"seed": seed, "intervention": {"name": "none", "steps": {}}},
                  classifier_metrics(frame), [f"seed={seed}"], {"predictions.parquet": frame})
    cfg = OmegaConf.create({"task_name": "train", "hydra": {"sweep": {"dir": str(sweep)}}})
    SweepReport(enabled=True, n_resamples=50).on_multirun_end(cfg)
    assert f"{sweep / 'report.html'}" in capsys.readouterr().out
    table = pd.read_csv(sweep / "runs.csv")
    assert sorted(table["seed"]) == [1, 2]
    assert "(n=2)" in (sweep / "report.md").read_text()


def test_evaluated_checkpoint_keeps_its_training_model(tmp_path):
    """evaluate.py's own `model` choice is not the checkpoint's: rows follow the checkpoint."""
    from report_fixtures import classifier_metrics

    from benevaudit.pipelines.report_files import build_report

    frame = predictions(4, 0.9, 0)
    base = write_run(tmp_path / "a" / "baseline", "train", {"model": "tiny_bert"},
                     {"intervention": {"name": "none", "steps": {}}}, classifier_metrics(frame))
    write_run(tmp_path / "a" / "evaluation" / "mask", "evaluate", {"model": "minilm"},
              {"ckpt": str(base), "intervention": {"name": "mask", "steps": {"mask": {}}}},
              classifier_metrics(frame))
    files = build_report([tmp_path / "a"], tmp_path / "out", n_resamples=0)
    table = files.sections[0].tables[0]
    assert "Model" not in table.headers and [r[:2] for r in table.rows] == [["clean", "—"],
                                                                             ["evaluation", "M"]]
