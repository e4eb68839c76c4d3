"""The report's FairDialogue Table 2 under either scoring: eq. 1-4 (``paper``, the default) or
the authors' released scoring (``report.fairdialogue.definition=released``), from real runs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import ConfigError
from report_fixtures import write_run

ROOT = Path(__file__).resolve().parents[1]


def probe_run(tmp: Path, out: Path, probe: str, rows: list[tuple[str, ...]]) -> dict:
    """Score answer rows with the real pipeline into ``out``, then give it a Hydra record."""
    from benevaudit.pipelines.probe import run

    csv = tmp / f"{probe}.csv"
    pd.DataFrame(rows, columns=["item", "task", "attribute", "group", "answer"]).to_csv(
        csv, index=False)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=[f"probe={probe}", f"paths.root_dir={tmp}",
                                          f"paths.output_dir={out}", "progress=false",
                                          "logger=none", "llm_cache=null",
                                          f"probe.answers.path={csv}",
                                          *(["probe.k=3"] if "recommendation" in probe else [])])
    run(cfg)
    write_run(out, "probe", {"probe": probe, "target": "m1"},
              {"target": {"name": "m1"}, "probe": {"k": 3}})
    return json.loads((out / "metrics.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("fair")
    rng = random.Random(5)
    decisions = [(f"i{n}", "award", "gender", g, rng.choice(["Yes.", "No.", "Maybe."]))
                 for n in range(12) for g in ("male", "female", "neutral")]
    names = ["a", "b", "c", "d", "e"]
    lists = [(f"c{n}", "course", "gender", g, "\n".join(
        f"{i + 1}. {x}" for i, x in enumerate(rng.sample(names, 3))))
        for n in range(12) for g in ("male", "female", "neutral")]
    metrics = {**probe_run(tmp, tmp / "runs" / "0", "fairdialogue_decision", decisions),
               **probe_run(tmp, tmp / "runs" / "1", "fairdialogue_recommendation", lists)}
    return tmp / "runs", metrics


def table2(root: Path, out: Path, **options):
    from benevaudit.pipelines.report_files import build_report

    scoring = {"definition": "paper", "similarity": "prag", **options}   # conf/report.yaml's
    files = build_report([root], out, n_resamples=200,
                         options={"fairdialogue": scoring} if options else None)
    section = next(s for s in files.sections if s.key == "fairdialogue")
    return section.tables[0]


def test_table2_shows_eq_1_to_4_by_default_and_the_released_scoring_when_asked(runs, tmp_path):
    root, m = runs
    paper = table2(root, tmp_path / "paper")
    assert paper.headers == ["Model", "Attribute", "award GUS", "course SNSR", "course SNSV",
                             "avg GUS", "avg SNSR", "avg SNSV", "Unparsed"]
    (row,) = paper.rows
    assert row[2].mean == pytest.approx(m["fairness/award/gender/gus"])
    assert row[3].mean == pytest.approx(m["fairness/course/gender/snsr"])
    assert "eq. 1-4" in paper.title

    released = table2(root, tmp_path / "released", definition="released")
    assert released.headers == paper.headers and "released scoring (PRAG" in released.title
    (row,) = released.rows
    assert row[2].mean == pytest.approx(m["fairness/award/gender/released/gus"])
    assert row[3].mean == pytest.approx(m["fairness/course/gender/released/prag/snsr"])
    assert row[4].mean == pytest.approx(m["fairness/course/gender/released/prag/snsv"])
    # "Maybe." is left out by eq. 1 and read as no by the release: the two GUS differ here
    assert abs(row[2].mean - m["fairness/award/gender/gus"]) > 0.01
    # the items' bootstrap reproduces the run's released values, so every cell has an interval
    for cell in row[2:5]:
        assert cell.low <= cell.mean <= cell.high and cell.high > cell.low

    serp = table2(root, tmp_path / "serp", definition="released", similarity="serp")
    assert serp.rows[0][3].mean == pytest.approx(m["fairness/course/gender/released/serp/snsr"])
    with pytest.raises(ConfigError, match=r"report.fairdialogue.definition='authors': expected "
                                          r"one of \['paper', 'released'\]"):
        table2(root, tmp_path / "bad", definition="authors")
