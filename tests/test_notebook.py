"""notebooks/inspect_run.py runs as a script on a run directory and reports what is in it."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def test_inspect_run_reads_a_run_directory(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps({"test/macro_f1": 0.9123, "test/recall_BB": 1.0}))
    pd.DataFrame({"label": ["N", "OB", "BB", "BB"], "pred": ["N", "BB", "BB", "BB"],
                  "user_age": ["young", "elder", "elder", "young"],
                  "user_gender": ["female", "male", "male", "female"],
                  "user_ability": ["none", "none", "blind", "none"]}).to_parquet(
        run / "predictions.parquet")
    (run / "cue_lexicon.json").write_text(json.dumps(
        {c: [{"word": f"{c.lower()}cue", "score": 1.0}] for c in ("N", "OB", "BB")}))
    (run / "attribution_heatmap.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    proc = subprocess.run([sys.executable, "notebooks/inspect_run.py", str(run)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "0.912" in proc.stdout and "bbcue" in proc.stdout
    assert f"figure: {run / 'attribution_heatmap.png'}" in proc.stdout
    assert "faithfulness.png" not in proc.stdout  # absent figures are not listed
