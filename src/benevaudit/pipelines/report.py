"""``python report.py runs=…``: collect run directories into ``runs.parquet``/``runs.csv``,
``report.html`` and ``report.md`` in this run's own directory; optionally a W&B Report.

Only run-directory files are read (metrics.json, predictions/responses Parquet, .hydra/, PNGs),
so a comparison works offline; W&B is a mirror, and its Report is built from the same sections.
``runs=[A,B] paired=true`` also compares the two runs item by item (``paired.csv``,
``paired_flips.csv`` and a "Paired comparison" section); ``gate=true`` then returns one line
per significant change in ``ReportFiles.gate``, and report.py exits 1 when there is any.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any, Union

from omegaconf import DictConfig
from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.pipelines.config import output_dir, validated
from benevaudit.pipelines.report_files import ReportFiles, build_report, write_paired
from benevaudit.report.document import SectionOutput
from benevaudit.report.paired import Comparison, compare
from benevaudit.report.paired_section import gate_lines, section
from benevaudit.report.runs import check_named, expand, find_runs
from benevaudit.report.spec import GateSpec, IntervalsSpec, SignificanceSpec, WandbReportSpec
from benevaudit.report.wandb_report import push, report_spec, sync_commands
from benevaudit.specs import RunSpec

log = logging.getLogger(__name__)
RUNS = "a run or sweep directory, a glob ('outputs/train/multiruns/*'), or a list [a,b]"


class ReportRun(RunSpec):
    """report.py's config: the runs to collect, the title, the intervals, FairDialogue's
    scoring options, the optional W&B Report, and the paired comparison of two runs with its
    significance level and CI gate."""

    runs: Annotated[Union[str, list[str]], Field(description=RUNS)]
    title: str
    bootstrap: IntervalsSpec
    fairdialogue: dict[str, Any]
    wandb: WandbReportSpec
    paired: bool
    significance: SignificanceSpec
    gate: GateSpec

    @model_validator(mode="before")
    @classmethod
    def gate_switch(cls, data: Any) -> Any:
        """``gate=true`` replaces the block: switched on, every metric, either direction."""
        if isinstance(data, dict) and isinstance(data.get("gate"), bool):
            data = {**data, "gate": {"enabled": data["gate"]}}
        return data

    @property
    def gating(self) -> GateSpec | None:
        return self.gate if self.gate.wanted else None


def run(cfg: DictConfig) -> ReportFiles:
    run = validated(ReportRun, cfg)
    out = output_dir(cfg)
    roots = expand(run.runs)
    check_named(roots)
    gate = run.gating                 # a gate asks for the paired comparison too
    comparison = extra = None
    if run.paired or gate is not None:
        comparison, extra = paired_comparison(roots, out, run.significance)
    files = build_report(roots, out, run.title, run.bootstrap.n_resamples, run.bootstrap.seed,
                         {"fairdialogue": run.fairdialogue}, [extra] if extra else [])
    bad = sum(r.status != "ok" for r in files.runs)
    print(f"report of {len(files.runs)} runs ({bad} left out, listed in the report): "
          f"{files.html}\n  also {files.markdown}, {files.runs_csv}, {files.runs_parquet}")
    if run.wandb.report:
        wandb_report(files, run.wandb, run.title, out)
    if gate is not None and comparison is not None:
        lines = gate_lines(comparison, gate.metrics, gate.direction, run.significance.alpha)
        for line in lines:
            print(line, file=sys.stderr)
        files = files._replace(gate=tuple(lines))
    return files


def paired_comparison(roots: list[Path], out: Path, significance: SignificanceSpec
                      ) -> tuple[Comparison, SectionOutput]:
    """runs=[A,B]: exactly two run directories, compared item by item; its files written."""
    if len(roots) != 2 or not all(find_runs(r) == [r] for r in roots):
        raise ConfigError(f"paired=true compares two runs: runs=[A,B], each a run directory; "
                          f"got {len(roots)} root(s): {', '.join(str(r) for r in roots)}")
    names = (str(roots[0]), str(roots[1]))
    comparison = compare(roots[0], roots[1], names, significance.alpha,
                         significance.n_resamples, significance.seed)
    files = write_paired(comparison, out)
    significant = int(comparison.table["significant"].sum())
    print(f"paired comparison of {len(comparison.table)} metrics ({significant} significant "
          f"after Holm at {significance.alpha:g}; items only in A: {comparison.only_a}, only in B: "
          f"{comparison.only_b}): {files.table}\n  flips: {files.flips}")
    return comparison, section(comparison, names, significance.alpha)


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
