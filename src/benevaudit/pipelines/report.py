"""``python report.py runs=…``: collect run directories into ``runs.parquet``/``runs.csv``,
``report.html`` and ``report.md`` in this run's own directory; optionally a W&B Report.

Only run-directory files are read (metrics.json, predictions/responses Parquet, .hydra/, PNGs),
so a comparison works offline; W&B is a mirror, and its Report is built from the same sections.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from omegaconf import DictConfig

from benevaudit.pipelines.config import output_dir, plain
from benevaudit.pipelines.inputs import check_inputs
from benevaudit.report.build import ReportFiles, build_report
from benevaudit.report.runs import check_named, expand
from benevaudit.report.wandb_report import push, report_spec, sync_commands

log = logging.getLogger(__name__)


def run(cfg: DictConfig) -> ReportFiles:
    check_inputs(cfg, "report")
    out = output_dir(cfg)
    roots = expand(plain(cfg.runs))
    check_named(roots)
    boot = plain(cfg.bootstrap)
    options = {"fairdialogue": plain(cfg.get("fairdialogue")) or {}}
    files = build_report(roots, out, str(cfg.title), int(boot["n_resamples"]), int(boot["seed"]),
                         options)
    bad = sum(r.status != "ok" for r in files.runs)
    print(f"report of {len(files.runs)} runs ({bad} left out, listed in the report): "
          f"{files.html}\n  also {files.markdown}, {files.runs_csv}, {files.runs_parquet}")
    if cfg.wandb.report:
        wandb_report(files, plain(cfg.wandb), str(cfg.title), out)
    return files


def wandb_report(files: ReportFiles, spec_cfg: dict, title: str, out: Path) -> None:
    """Online: save the W&B Report. Offline: keep its specification and say how to upload."""
    spec = report_spec(files.sections, files.runs, spec_cfg["project"], spec_cfg.get("entity"),
                       title)
    spec_path = out / "wandb_report.json"
    spec_path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if spec_cfg.get("mode", "online") != "online":
        commands = sync_commands(files.runs) or ["(no offline W&B runs under these directories)"]
        print(f"W&B is offline: the local report is {files.html}; the W&B Report specification "
              f"is {spec_path}.\nUpload the runs, then rerun with wandb.mode=online:\n  "
              + "\n  ".join(commands))
        return
    url = push(spec)
    print(f"W&B Report: {url}")
