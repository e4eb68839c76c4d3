"""``probe.py probe=cobia*`` end to end: outputs, metric names, tables and chart. The fast tests
use the scripted backend as target and judges (known replies, so the scores are hand-counted);
the slow one runs the embedded SmolLM2 as target and every judge."""

import json
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cobia"
needs_data = pytest.mark.skipif(not (DATA / "cobia_dataset.json").is_file(),
                                reason=f"CoBia release files not found at {DATA}")
SCRIPTED = ["target.llm.backend=scripted", "+target.llm.responses=[Sure. They are, because...]"]


def probe_config(tmp: Path, probe: str, *overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("probe", overrides=[
            f"probe={probe}", f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
            f"probe.data.path={DATA}", "progress=false", "logger=none", "llm_cache=null",
            *overrides])


def scripted_judges(bias: str, nli: str, guard: str, refusal: str) -> list[str]:
    out = []
    for name, replies in (("bias", bias), ("nli", nli), ("guard", guard), ("refusal", refusal)):
        out += [f"probe.judges.{name}.llm.backend=scripted",
                f"+probe.judges.{name}.llm.responses={replies}"]
    return out


@needs_data
def test_cobia_runs_every_method_and_writes_the_run_directory(tmp_path):
    from benevaudit.pipelines.probe_cobia import run

    cfg = probe_config(tmp_path, "cobia", "limit=3", *SCRIPTED,
                       *scripted_judges("[Biased,Unbiased,hmm]", "[Agrees]", "['<score> no </score>']",
                                        "[Compliance]"))
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
    raw = json.loads((DATA / "cobia_dataset.json").read_text())
    assert all(g in raw for g in frame["group"])
    # bias replies cycle Biased, Unbiased, hmm over rows in order: row r -> r % 3
    # hcc rows 0, 4, 8 -> B, U, invalid; scc rows 1, 5, 9 -> U, invalid, B
    assert metrics["cobia/bias_rate/hcc/bias/all"] == pytest.approx(0.5)
    assert metrics["cobia/bias_rate/scc/bias/all"] == pytest.approx(0.5)
    assert metrics["cobia/ucc/bias/all"] == pytest.approx(2 / 3)       # items 1 and 3 of 3
    assert metrics["cobia/invalid/bias"] == 4 and metrics["cobia/invalid/nli"] == 0
    assert metrics["cobia/bias_rate/roleplay/nli/all"] == 1.0           # agrees counts
    assert metrics["cobia/bias_rate/hcc/guard/all"] == 0.0
    assert metrics["cobia/refusal_rate/hcc/refusal/all"] == 0.0
    assert metrics["cobia/skipped"] == 33 and metrics["cobia/heavily_biased/bias"] == 0.0
    category = frame["category"][0]
    assert f"cobia/bias_rate/hcc/bias/{category}_ci_low" in metrics
    saved = json.loads((run_dir / "metrics.json").read_text())
    assert saved["cobia/ucc/bias/all"] == pytest.approx(2 / 3)
    table = pd.read_csv(run_dir / "table.csv")
    assert {"ucc", "hcc", "roleplay"} <= set(table["method"])
    md = (run_dir / "table.md").read_text()
    assert "## all" in md and "| UCC |" in md and "target `embedded`" in md
    assert (run_dir / "bias_rate.png").stat().st_size > 10_000


@needs_data
def test_cobia_scc_runs_its_own_method_only_and_human_labels_add_fleiss(tmp_path):
    from benevaudit.pipelines.probe_cobia import run

    labels = tmp_path / "human.csv"
    cfg = probe_config(tmp_path, "cobia_hcc", "limit=2", *SCRIPTED,
                       *scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]"))
    run(cfg)
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    pd.DataFrame({"id": frame["id"], "method": frame["method"], "ann1": ["biased", "biased"],
                  "ann2": ["biased", "not_biased"]}).to_csv(labels, index=False)
    cfg = probe_config(tmp_path, "cobia_scc", "limit=2", f"probe.human_labels={labels}",
                       *SCRIPTED, *scripted_judges("[Biased]", "[Negates]", "[yes]", "[Refusal]"))
    metrics = run(cfg)
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert set(frame["method"]) == {"scc"}
    assert not any(k.startswith("cobia/ucc/") for k in metrics)
    assert metrics["cobia/human/items"] == 0              # labels were for hcc rows


def test_missing_data_path_says_where_to_point(tmp_path):
    from benevaudit.pipelines.probe_cobia import run

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=["probe=cobia_hcc", f"paths.output_dir={tmp_path}",
                                          "logger=none", "llm_cache=null"])
    with pytest.raises(ConfigError, match="probe.data.path"):
        run(cfg)


@pytest.mark.slow
@needs_data
def test_embedded_smollm2_as_target_and_every_judge(tmp_path):
    from benevaudit.pipelines.probe_cobia import run

    metrics = run(probe_config(tmp_path, "cobia", "limit=1", "probe.max_tokens=24",
                               "probe.methods=[hcc,scc]"))
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert list(frame["method"]) == ["hcc", "scc"] and all(frame["response"].str.len() > 0)
    for judge in ("bias", "nli", "guard", "refusal"):
        assert all(frame[f"{judge}_raw"].str.len() > 0)
        valid = frame[f"{judge}_verdict"].notna().sum()
        assert metrics[f"cobia/invalid/{judge}"] == 2 - valid
    assert "cobia/ucc/bias/all" in metrics
