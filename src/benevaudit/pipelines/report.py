"""``python report.py runs=…``: collect run directories into ``runs.parquet``/``runs.csv``,
``report.html`` and ``report.md`` in this run's own directory; optionally a W&B Report.

Only run-directory files are read (metrics.json, predictions/responses Parquet, .hydra/, PNGs),
so a comparison works offline; W&B is a mirror, and its Report is built from the same sections.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated, Any, Union

from omegaconf import DictConfig
from pydantic import Field

from benevaudit.pipelines.config import output_dir, validated
from benevaudit.report.build import ReportFiles, build_report
from benevaudit.report.runs import check_named, expand
from benevaudit.report.spec import IntervalsSpec, WandbReportSpec
from benevaudit.report.wandb_report import push, report_spec, sync_commands
from benevaudit.specs import RunSpec

log = logging.getLogger(__name__)
RUNS = "a run or sweep directory, a glob ('outputs/train/multiruns/*'), or a list [a,b]"


class ReportRun(RunSpec):
    """report.py's config: the runs to collect, the title, the intervals, FairDialogue's
    scoring options and the optional W&B Report."""

    runs: Annotated[Union[str, list[str]], Field(description=RUNS)]
    title: str
    bootstrap: IntervalsSpec
    fairdialogue: dict[str, Any]
    wandb: WandbReportSpec


def run(cfg: DictConfig) -> ReportFiles:
    run = validated(ReportRun, cfg)
    out = output_dir(cfg)
    roots = expand(run.runs)
    check_named(roots)
    files = build_report(roots, out, run.title, run.bootstrap.n_resamples, run.bootstrap.seed,
                         {"fairdialogue": run.fairdialogue})
    bad = sum(r.status != "ok" for r in files.runs)
    print(f"report of {len(files.runs)} runs ({bad} left out, listed in the report): "
          f"{files.html}\n  also {files.markdown}, {files.runs_csv}, {files.runs_parquet}")
    if run.wandb.report:
        wandb_report(files, run.wandb, run.title, out)
    return files


def wandb_report(files: ReportFiles, wandb: WandbReportSpec, title: str, out: Path) -> None:
    """Online: save the W&B Report. Offline: keep its specification and say how to upload."""
    layout = report_spec(files.sections, files.runs, wandb.project, wandb.entity, title)
    spec_path = out / "wandb_report.json"
    spec_path.write_text(json.dumps(layout, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if wandb.mode != "online":
        commands = sync_commands(files.runs) or ["(no offline W&B runs under these directories)"]
        print(f"W&B is offline: the local report is {files.html}; the W&B Report specification "
              f"is {spec_path}.\nUpload the runs, then rerun with wandb.mode=online:\n  "
              + "\n  ".join(commands))
        return
    url = push(layout)
    print(f"W&B Report: {url}")
