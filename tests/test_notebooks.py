"""The notebook tier: every analysis notebook runs, as written, on a tiny run directory built
here, so none can rot. Run with `make test-notebooks` (`-m notebooks --runslow`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from report_fixtures import audit_dir

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
pytestmark = [pytest.mark.notebooks, pytest.mark.slow]


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    root = audit_dir(tmp_path_factory.mktemp("nb") / "audit", seeds=(1, 2))
    lexicon = {c: [{"word": w, "score": 1.0 / (i + 1)} for i, w in enumerate(
        ["dear", "sweetie", "rest", "maybe", f"{c.lower()}only"])] for c in ("N", "OB", "BB")}
    (root / "seed2" / "baseline" / "cue_lexicon.json").write_text(json.dumps(lexicon))
    return root


def run(notebook: str, *args: str) -> str:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, f"notebooks/{notebook}", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_notebooks_are_percent_format_without_outputs():
    assert {p.name for p in NOTEBOOKS} >= {"inspect_run.py", "compare_sweep.py",
                                            "lexicon_explorer.py"}
    for path in NOTEBOOKS:
        text = path.read_text()
        assert text.startswith("# %% [markdown]") and text.count("\n# %%\n") >= 3, path.name
        assert "Out[" not in text and "execution_count" not in text, path.name


def test_inspect_run(audit):
    out = run("inspect_run.py", audit / "seed1" / "baseline")
    assert "test/macro_f1" in out and "ncue0" in out
    assert f"figure: {audit / 'seed1' / 'baseline' / 'attribution_heatmap.png'}" in out


def test_compare_sweep(audit):
    out = run("compare_sweep.py", audit, "test/macro_f1")
    assert "choices that vary: ['intervention']" in out
    assert "punct+random_mask" in out and "Table 4" in out and "(n=2)" in out
    assert "figure: test/macro_f1 per run of audit (16 bars)" in out


def test_lexicon_explorer(audit):
    out = run("lexicon_explorer.py", audit, "sweetie")
    assert "2 lexicon(s)" in out and "jaccard" in out
    assert "seed2/baseline" in out and "sweetie" in out
    assert "seed2/baseline: ['dear', 'maybe', 'rest', 'sweetie']" in out   # in every class
    assert "seed1/baseline: none" in out
