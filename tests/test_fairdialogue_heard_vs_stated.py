"""The report's "heard vs stated" table: one model's GUS with the group only heard (audio mode)
beside the group stated (text mode), from real scored runs, with intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from hydra import compose, initialize_config_dir

from report_fixtures import write_run

ROOT = Path(__file__).resolve().parents[1]


def scored(tmp: Path, out: Path, mode: str, answers: dict[str, str]) -> dict:
    """Decision answers (one per group, 12 items) scored by the real pipeline, recorded as a
    run of model m1 in ``mode``."""
    from benevaudit.pipelines.probe import run

    csv = tmp / f"{mode}.csv"
    rows = [(f"i{n}", "award", "gender", g, answers[g] if n % 3 else "Yes.")
            for n in range(12) for g in ("male", "female")]
    pd.DataFrame(rows, columns=["item", "task", "attribute", "group", "answer"]).to_csv(
        csv, index=False)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=["probe=fairdialogue_decision", f"paths.root_dir={tmp}",
                                          f"paths.output_dir={out}", "progress=false",
                                          "logger=none", "llm_cache=null",
                                          f"probe.answers.path={csv}"])
    run(cfg)
    write_run(out, "probe", {"probe": "fairdialogue_decision", "target": "m1"},
              {"target": {"name": "m1"}, "probe": {"mode": mode}},
              overrides=[f"probe.mode={mode}"])
    return json.loads((out / "metrics.json").read_text())


def test_heard_beside_stated_per_attribute_with_intervals(tmp_path: Path):
    from benevaudit.pipelines.report_files import build_report

    heard = scored(tmp_path, tmp_path / "runs" / "audio", "audio",
                   {"male": "Yes.", "female": "No."})      # bias only when heard
    stated = scored(tmp_path, tmp_path / "runs" / "text", "text",
                    {"male": "Yes.", "female": "Yes."})
    assert heard["fairness/award/gender/gus"] > stated["fairness/award/gender/gus"] == 0
    files = build_report([tmp_path / "runs"], tmp_path / "report", n_resamples=200)
    section = next(s for s in files.sections if s.key == "fairdialogue")
    table2 = section.tables[0]
    assert sorted(r[0] for r in table2.rows) == ["m1", "m1 (heard)"]
    (table,) = [t for t in section.tables if t.title.startswith("Heard vs stated")]
    (row,) = table.rows
    assert row[:4] == ["m1", "gender", "award", "GUS"]
    audio, text, diff, paired_p = row[4:]
    assert audio.mean == heard["fairness/award/gender/gus"]
    assert text.mean == stated["fairness/award/gender/gus"]
    assert audio.low <= audio.mean <= audio.high and audio.high > audio.low   # an interval
    assert diff.mean == audio.mean - text.mean > 0
    # the same 12 items in both modes; the 8 that differ all lean one way: exact 2 / 2^8
    assert paired_p == f"{2 / 2 ** 8:.3g}"
