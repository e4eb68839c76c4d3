"""``probe.py probe=cobia*`` end to end: outputs, metric names, tables and chart. The fast tests
run on the project's stand-in (no ``probe.data.path``) with the scripted backend as target and
judges (known replies, so the scores are hand-counted); one data-tier test runs the release; the
slow one runs the embedded SmolLM2 as target and every judge."""

import json
import logging
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benevaudit.probes.cobia.stand_in import GROUPS

ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = ["target.llm.backend=scripted", "+target.llm.responses=[Sure. They are, because...]"]


def probe_config(tmp: Path, probe: str, *overrides: str, run: str = "run",
                 data: Path | None = None):
    """A probe config writing to ``tmp/run``; without ``data``, the run reads the stand-in."""
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("probe", overrides=[
            f"probe={probe}", f"paths.root_dir={tmp}", f"paths.output_dir={tmp / run}",
            "progress=false", "logger=none", "llm_cache=null",
            *([f"probe.data.path={data}"] if data else []), *overrides])


def scripted_judges(bias: str, nli: str, guard: str, refusal: str) -> list[str]:
    out = []
    for name, replies in (("bias", bias), ("nli", nli), ("guard", guard), ("refusal", refusal)):
        out += [f"probe.judges.{name}.llm.backend=scripted",
                f"+probe.judges.{name}.llm.responses={replies}"]
    return out


def test_cobia_runs_every_method_and_writes_the_run_directory(tmp_path, caplog):
    from benevaudit.pipelines.probe import run

    cfg = probe_config(tmp_path, "cobia", "limit=3", *SCRIPTED,
                       *scripted_judges("[Biased,Unbiased,hmm]", "[Agrees]", "['<score> no </score>']",
                                        "[Compliance]"))
    with caplog.at_level(logging.INFO, logger="benevaudit.probes.cobia.probe"):
        metrics = run(cfg)
    run_dir = tmp_path / "run"
    frame = pd.read_parquet(run_dir / "responses.parquet")
    # 3 items × (hcc, scc, zero_shot, roleplay); dan left out without a template
    assert list(frame["method"][:4]) == ["hcc", "scc", "zero_shot", "roleplay"] and len(frame) == 12
    for column in ("id", "group", "category", "method", "messages", "response", "bias_verdict",
                   "bias_raw", "nli_verdict", "guard_verdict", "refusal_verdict"):
        assert column in frame.columns
    messages = [json.loads(m) for m in frame["messages"]]
    assert len(messages[0]) == 11 and len(messages[1]) == 1 and messages[0][-1]["role"] == "user"
    assert frame["group"].isin(list(GROUPS)).all() and frame["id"].nunique() == 3
    assert (run_dir / "cobia_stand_in" / "cobia_dataset.json").is_file()
    assert json.loads((run_dir / "run.json").read_text())["ran"]["stand_in"] is True
    assert "STAND-IN DATA" in caplog.text and "cobia/stand_in" not in metrics
    # bias replies cycle Biased, Unbiased, hmm over rows in order: row r -> r % 3
    # hcc rows 0, 4, 8 -> B, U, invalid; scc rows 1, 5, 9 -> U, invalid, B
    assert metrics["cobia/bias_rate/hcc/bias/all"] == pytest.approx(0.5)
    assert metrics["cobia/bias_rate/scc/bias/all"] == pytest.approx(0.5)
    assert metrics["cobia/ucc/bias/all"] == pytest.approx(2 / 3)       # items 1 and 3 of 3
    assert metrics["cobia/invalid/bias"] == 4 and metrics["cobia/invalid/nli"] == 0
    assert metrics["cobia/bias_rate/roleplay/nli/all"] == 1.0           # agrees counts
    assert metrics["cobia/bias_rate/hcc/guard/all"] == 0.0
    assert metrics["cobia/refusal_rate/hcc/refusal/all"] == 0.0
    assert metrics["cobia/skipped"] == 1 and metrics["cobia/heavily_biased/bias"] == 0.0
    category = frame["category"][0]
    assert f"cobia/bias_rate/hcc/bias/{category}_ci_low" in metrics
    saved = json.loads((run_dir / "metrics.json").read_text())
    assert saved["cobia/ucc/bias/all"] == pytest.approx(2 / 3)
    table = pd.read_csv(run_dir / "table.csv")
    assert {"ucc", "hcc", "roleplay"} <= set(table["method"])
    md = (run_dir / "table.md").read_text()
    assert "## all" in md and "| UCC |" in md and "target `embedded`" in md
    assert md.startswith("> **Stand-in data**")
    assert (run_dir / "bias_rate.png").stat().st_size > 10_000


def test_cobia_scc_runs_its_own_method_only_and_human_labels_add_fleiss(tmp_path):
    from benevaudit.pipelines.probe import run

    labels = tmp_path / "human.csv"
    cfg = probe_config(tmp_path, "cobia_hcc", "limit=2", *SCRIPTED,
                       *scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]"))
    run(cfg)
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    pd.DataFrame({"id": frame["id"], "method": frame["method"], "prompt_group": "bias",
                  "ann1": ["biased", "biased"],
                  "ann2": ["biased", "not_biased"]}).to_csv(labels, index=False)
    cfg = probe_config(tmp_path, "cobia_scc", "limit=2", f"probe.human_labels={labels}",
                       *SCRIPTED, *scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]"))
    metrics = run(cfg)
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert set(frame["method"]) == {"scc"}
    assert not any(k.startswith("cobia/ucc/") for k in metrics)
    assert metrics["cobia/human/items"] == 0              # labels were for hcc rows


@pytest.mark.data
def test_cobia_on_the_release_is_not_marked(tmp_path, cobia_release):
    from benevaudit.pipelines.probe import run

    judges = scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]")
    metrics = run(probe_config(tmp_path, "cobia_hcc", "limit=3", *SCRIPTED, *judges,
                               data=cobia_release))
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    raw = json.loads((cobia_release / "cobia_dataset.json").read_text(encoding="utf-8"))
    assert frame["group"].isin(list(raw)).all() and frame["group"].nunique() == 3
    assert json.loads((tmp_path / "run" / "run.json").read_text())["ran"]["stand_in"] is False
    assert metrics["cobia/skipped"] == 33
    assert not (tmp_path / "run" / "cobia_stand_in").exists()
    assert (tmp_path / "run" / "table.md").read_text().startswith("# CoBia bias rates")


def test_the_report_marks_stand_in_runs_and_keeps_them_apart(tmp_path):
    """Two runs of one target, one on the stand-in and one on files given as probe.data.path:
    the report labels the first and never pools the two into one row."""
    from benevaudit.pipelines.probe import run
    from benevaudit.pipelines.report_files import build_report

    judges = scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]")
    runs = tmp_path / "runs"
    for name, data in (("a", None), ("b", runs / "a" / "cobia_stand_in")):
        cfg = probe_config(runs, "cobia_hcc", "limit=2", *SCRIPTED, *judges, run=name, data=data)
        metrics = run(cfg)
        (runs / name / ".hydra").mkdir()                              # as probe.py leaves it
        OmegaConf.save(cfg, runs / name / ".hydra" / "config.yaml")
    assert json.loads((runs / "b" / "run.json").read_text())["ran"]["stand_in"] is False
    report = build_report([runs], tmp_path / "report", n_resamples=50)
    (section,) = [s for s in report.sections if s.key == "cobia"]
    table = next(t for t in section.tables if t.title == "Bias rate, category all")
    assert {r[0] for r in table.rows} == {"embedded", "embedded [stand-in data]"}
    assert "not the CoBia release" in table.note
    skipped = next(t for t in section.tables if t.title.startswith("Skipped"))
    assert sorted(r[0] for r in skipped.rows) == ["embedded", "embedded [stand-in data]"]
    assert "embedded [stand-in data]" in report.markdown.read_text(encoding="utf-8")


@pytest.mark.slow
def test_embedded_smollm2_as_target_and_every_judge(tmp_path):
    from benevaudit.pipelines.probe import run

    metrics = run(probe_config(tmp_path, "cobia", "limit=1", "probe.max_tokens=24",
                               "probe.methods=[hcc,scc]"))
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert list(frame["method"]) == ["hcc", "scc"] and all(frame["response"].str.len() > 0)
    for judge in ("bias", "nli", "guard", "refusal"):
        assert all(frame[f"{judge}_raw"].str.len() > 0)
        valid = frame[f"{judge}_verdict"].notna().sum()
        assert metrics[f"cobia/invalid/{judge}"] == 2 - valid
    assert "cobia/ucc/bias/all" in metrics
