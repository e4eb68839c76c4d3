"""W&B, checked offline: the Report specification that would be sent, the reports-API objects
built from it, the offline path (local report + `wandb sync`), and that offline run files carry
the sweep as group, the entrypoint as job_type and the config-group choices."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from config_fixtures import option
from report_fixtures import classifier_metrics, predictions, write_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def two_sweeps(tmp_path) -> Path:
    root = tmp_path / "runs"
    for sweep in ("sweepA", "sweepB"):
        for job, iv in enumerate(("none", "punct")):
            frame = predictions(6, 0.8, job)
            write_run(root / sweep / str(job), "evaluate", {"intervention": iv, "model": "minilm"},
                      {"intervention": {"name": iv, "steps": {iv: {}} if iv != "none" else {}}},
                      classifier_metrics(frame), [f"intervention={iv}"],
                      {"predictions.parquet": frame}, sweep=root / sweep)
    offline = root / "sweepA" / "0" / "wandb" / "offline-run-20260101_000000-abc123"
    offline.mkdir(parents=True)
    return root


def test_report_spec_groups_by_choice_and_filters_by_sweep(two_sweeps, tmp_path):
    from wandb_workspaces import expr

    from benevaudit.pipelines.report_files import build_report
    from benevaudit.report.sections.finetune_audit import COLUMNS
    from benevaudit.report.wandb_report import report_spec, workspace_report

    files = build_report([two_sweeps], tmp_path / "out", n_resamples=0)
    spec = report_spec(files.sections, files.runs, "benevaudit", "lab", "Audit comparison")
    grids = [b for b in spec["blocks"] if b["type"] == "panel_grid"]
    (grid,) = grids
    assert grid["runset"]["groupby"] == ["config.choices.intervention"]   # model does not vary
    parsed = expr.expr_to_filters(grid["runset"]["filters"]).model_dump(exclude_none=True)
    # exactly the report's runs: by id where the run directory holds its W&B run, else by sweep
    by_id, by_group = parsed["filters"]
    assert parsed["op"] == "OR" and by_id["key"]["name"] == "name" and by_id["value"] == ["abc123"]
    assert by_group["key"]["name"] == "group" and by_group["value"] == ["sweepA", "sweepB"]
    assert [p["metrics"] for p in grid["panels"]] == [[c] for c in COLUMNS]
    assert {"type": "h2", "text": "Fine-tuning audit (Table 4)"} in spec["blocks"]
    report = workspace_report(spec)                       # the reports API objects, not sent
    kinds = [type(b).__name__ for b in report.blocks]
    assert kinds.count("PanelGrid") == 1 and "H2" in kinds and "MarkdownBlock" in kinds
    runset = report.blocks[kinds.index("PanelGrid")].runsets[0]
    assert (runset.project, runset.entity, runset.groupby) == ("benevaudit", "lab",
                                                              ["config.choices.intervention"])


def test_probe_sections_get_panels_of_their_own_metrics(tmp_path):
    from test_report_sections import _cobia_run

    from benevaudit.pipelines.report_files import build_report
    from benevaudit.report.wandb_report import report_spec

    _cobia_run(tmp_path / "runs" / "c", "embedded")
    files = build_report([tmp_path / "runs"], tmp_path / "out", n_resamples=0)
    spec = report_spec(files.sections, files.runs, "benevaudit", None, "CoBia")
    (grid,) = [b for b in spec["blocks"] if b["type"] == "panel_grid"]
    names = [p["metrics"][0] for p in grid["panels"]]
    assert "cobia/ucc/bias/all" in names and "cobia/bias_rate/hcc/bias/gender" in names
    assert not [n for n in names if n.endswith(("_ci_low", "_ci_high"))]


def test_offline_report_prints_sync_commands(two_sweeps, tmp_path, capsys):
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.report import run

    out = tmp_path / "rep"
    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("report", overrides=[f"runs={two_sweeps}", "wandb.report=true",
                                           "wandb.mode=offline", "bootstrap.n_resamples=0",
                                           f"paths.output_dir={out}"])
    run(cfg)
    printed = capsys.readouterr().out
    assert "wandb sync " in printed and "offline-run-20260101_000000-abc123" in printed
    spec = json.loads((out / "wandb_report.json").read_text())
    assert spec["project"] == "benevaudit" and (out / "report.html").is_file()


def _records(path: Path) -> list[bytes]:
    """Records of a W&B transaction log (.wandb): a 7-byte header, then 32 KiB blocks of
    chunks, each with a 7-byte header (crc32, length, type: 1 full, 2 first, 3 middle, 4 last)."""
    data, pos, out, buf = path.read_bytes(), 7, [], b""
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:
            pos += 32768 - pos % 32768
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind == 0:
            break
        buf = chunk if kind in (1, 2) else buf + chunk
        if kind in (1, 4):
            out.append(buf)
    return out


@pytest.mark.slow  # a real offline wandb.init through the Lightning logger: ~30 s on 2 cores
def test_offline_run_files_carry_group_job_type_and_choices(tmp_path, monkeypatch):
    from hydra import compose, initialize_config_dir
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import open_dict
    from wandb.proto import wandb_internal_pb2 as pb

    from benevaudit.pipelines.config import sweep_name
    from benevaudit.outputs.spec import LoggerBlock
    from benevaudit.outputs.tracking import build_logger, finish_logger

    monkeypatch.setenv("WANDB_MODE", "offline")
    sweep = tmp_path / "multiruns" / "2026-12-01_10-00-00-000001"
    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("evaluate", return_hydra_config=True, overrides=["ckpt=x"])
    with open_dict(cfg):
        cfg.hydra.mode = RunMode.MULTIRUN
        cfg.hydra.sweep.dir = str(sweep)
    HydraConfig.instance().set_config(cfg)
    try:
        out = sweep / "0"
        out.mkdir(parents=True)
        logger = build_logger(LoggerBlock.read(option("logger", "wandb")), out,
                              {"task_name": "evaluate", "seed": 3}, {"model": "tiny_bert",
                                                                     "intervention": "mask"}, "0",
                              sweep_name())
        logger.experiment.log({"test/macro_f1": 0.5})
        finish_logger(logger)
    finally:
        HydraConfig.instance().cfg = None
    (log,) = out.glob("wandb/offline-run-*/run-*.wandb")
    runs = [r.run for r in map(pb.Record.FromString, _records(log))
            if r.WhichOneof("record_type") == "run"]
    assert runs and runs[0].run_group == sweep.name and runs[0].job_type == "evaluate"
    config = {item.key: json.loads(item.value_json) for item in runs[0].config.update}
    assert config["choices"] == {"model": "tiny_bert", "intervention": "mask"}
    assert config["task_name"] == "evaluate"
