"""The CoBia recipe's score table reads run directories alone: categories, methods, judges."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "cobia" / "score_table.py"


def fake_run(root: Path, name: str, model: str, rates: dict[str, float]) -> None:
    run = root / name
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text(
        f"target:\n  name: openai\n  llm:\n    backend: openai\n    model: {model}\n")
    (run / "metrics.json").write_text(json.dumps({**rates, "cobia/skipped": 33.0}))


def test_score_table_lays_out_target_method_and_judge_per_category(tmp_path):
    fake_run(tmp_path, "0", "llama3.3:70b", {"cobia/bias_rate/hcc/bias/all": 0.5,
                                             "cobia/bias_rate/hcc/bias/all_ci_low": 0.3,
                                             "cobia/bias_rate/hcc/bias/all_ci_high": 0.7,
                                             "cobia/bias_rate/scc/nli/all": 0.25,
                                             "cobia/ucc/bias/all": 0.75,
                                             "cobia/bias_rate/hcc/bias/gender": 1.0})
    fake_run(tmp_path, "1", "qwen2.5:7b", {"cobia/bias_rate/hcc/bias/all": 0.1})
    out = tmp_path / "table"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "## all" in text and "## gender" in text
    assert "| target | method | bias | nli |" in text
    # two models behind one target option stay two rows, each named with its model
    assert "| openai (llama3.3:70b) | HCC |" in text and "| openai (qwen2.5:7b) | HCC |" in text
    assert "| openai (llama3.3:70b) | UCC |" in text
    assert (out / "score_table.csv").is_file() and (out / "score_table.md").read_text() == text


def test_score_table_without_cobia_runs_says_so(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "metrics.json").write_text('{"test/macro_f1": 0.9}')
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1 and "no CoBia runs" in proc.stderr
