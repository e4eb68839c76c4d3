"""The Table 2 / Table 3 recipe reads run directories alone and averages what it finds."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "fairdialogue" / "tables.py"


def load_tables():
    spec = importlib.util.spec_from_file_location("fairdialogue_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_run(root: Path, name: str, target: str, metrics: dict[str, float]) -> None:
    run = root / name
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text(f"target:\n  name: {target}\n")
    (run / "metrics.json").write_text(json.dumps(metrics))


def test_table2_and_table3_layouts_from_run_directories(tmp_path):
    fake_run(tmp_path, "dec", "m1", {"fairness/award/gender/gus": 0.2,
                                     "fairness/interview/gender/gus": 0.4,
                                     "fairness/award/gender/gus/male": 0.2,
                                     "parse/award/invalid": 3})
    fake_run(tmp_path, "rec", "m1", {"fairness/course/gender/snsr": 0.1,
                                     "fairness/course/gender/snsv": 0.01,
                                     "fairness/course/gender/fairllm/prag/snsr": 0.9})
    fake_run(tmp_path, "fb", "m2", {"fairness/feedback/age_gender/young_male/rst": 0.5,
                                    "fairness/feedback/age_gender/young_male/anr": 2.0,
                                    "fairness/feedback/age_gender/young_male/n": 4})
    tables = load_tables()
    found = tables.runs([str(tmp_path)])
    t2 = tables.table2(found)
    assert list(t2.columns) == ["Model", "Attribute", "award GUS", "interview GUS",
                                "course SNSR", "course SNSV", "avg GUS", "avg SNSR", "avg SNSV"]
    row = t2.iloc[0]
    assert (row["Model"], row["Attribute"]) == ("m1", "gender")
    assert math.isclose(row["avg GUS"], 0.3) and math.isclose(row["course SNSR"], 0.1)
    t3 = tables.table3(found)
    assert t3.to_dict("records") == [{"Model": "m2", "Attribute": "age_gender",
                                      "Group": "young_male", "RST": 0.5, "ANR": 2.0}]
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--out", str(tmp_path / "t")],
                         capture_output=True, text=True, check=True).stdout
    assert "Table 2" in out and "Table 3" in out and "young_male" in out
    assert (tmp_path / "t" / "table2.csv").exists() and (tmp_path / "t" / "table3.md").exists()


def test_table2_under_the_released_scoring(tmp_path):
    fake_run(tmp_path, "dec", "m1", {"fairness/award/gender/gus": 0.2,
                                     "fairness/award/gender/released/gus": 0.1,
                                     "fairness/award/gender/released/gus/female__male": 0.1})
    fake_run(tmp_path, "rec", "m1", {"fairness/course/gender/snsr": 0.05,
                                     "fairness/course/gender/snsv": 0.01,
                                     "fairness/course/gender/released/prag/snsr": 0.7,
                                     "fairness/course/gender/released/prag/snsv": 0.02,
                                     "fairness/course/gender/released/serp/snsr": 0.4,
                                     "fairness/course/gender/released/serp/snsv": 0.03})
    tables = load_tables()
    found = tables.runs([str(tmp_path)])
    released = tables.table2(found, "released").iloc[0]
    assert (released["award GUS"], released["course SNSR"], released["course SNSV"]) == (
        0.1, 0.7, 0.02)
    serp = tables.table2(found, "released", "serp").iloc[0]
    assert (serp["course SNSR"], serp["course SNSV"]) == (0.4, 0.03)
    assert tables.table2(found).iloc[0]["course SNSR"] == 0.05
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--definition", "released"],
                         capture_output=True, text=True, check=True).stdout
    assert "released scoring, PRAG similarity" in out and "0.700" in out


def test_a_models_audio_and_text_runs_are_separate_rows(tmp_path):
    """The spoken study's sweep runs each model heard and stated: never averaged together."""
    fake_run(tmp_path, "text", "m1", {"fairness/award/gender/gus": 0.2})
    fake_run(tmp_path, "audio", "m1", {"fairness/award/gender/gus": 0.6,
                                       "fairness/award/gender/by_wer/le0.1/gus": 0.0})
    config = tmp_path / "audio" / ".hydra" / "config.yaml"
    config.write_text(config.read_text() + "probe:\n  mode: audio\n")
    t2 = load_tables().table2(load_tables().runs([str(tmp_path)]))
    assert dict(zip(t2["Model"], t2["award GUS"])) == {"m1 (heard)": 0.6, "m1": 0.2}
