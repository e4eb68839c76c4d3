"""``probe.py``: one entrypoint for every probe; ``probe.family`` (and FairDialogue's
``probe.kind``) picks it from ``probes.registry``.

Compose, build the probe from the plain ``probe`` block, run it over the target, write the run
directory: ``responses.parquet``, ``metrics.json``, the probe's tables and figures (and what
the probe wrote as it went). ``dry_run=true`` runs it against recording models and keeps only
``requests.jsonl`` and the request counts in ``metrics.json``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from benevaudit.pipelines.config import group_choices, output_dir, plain, run_logger, write_metrics
from benevaudit.pipelines.dry_run import dry_run_of, probe_requests
from benevaudit.pipelines.inputs import check_inputs
from benevaudit.probes.base import ProbeResult, RunSettings
from benevaudit.probes.registry import build
from benevaudit.report.tracking import finish_logger


def run(cfg: DictConfig) -> dict[str, float]:
    """Check the inputs, run the probe, write its run directory, and mirror its metrics to the
    logger (W&B offline by default: group = the sweep, job type = probe, the config-group
    choices)."""
    check_inputs(cfg, "probe")
    probe, target = build(plain(cfg.probe)), plain(cfg.target)
    settings = RunSettings(output_dir(cfg), int(cfg.seed),
                           None if cfg.get("limit") is None else int(cfg.limit),
                           bool(cfg.get("progress", True)), cfg.get("llm_cache"))
    dry = dry_run_of(cfg)
    if dry is not None:
        return probe_requests(cfg, lambda: probe.run(target, settings), dry)
    out, choices = settings.run_dir, group_choices()
    logger = run_logger(cfg, out, f"probe-{choices.get('probe', cfg.probe.get('family'))}-{out.name}")
    try:
        result = probe.run(target, settings)
        write_run(out, result)
        if logger:
            logger.log_metrics({k: v for k, v in result.metrics.items() if v == v})
        return result.metrics
    finally:
        if logger:
            finish_logger(logger)


def write_run(out: Path, result: ProbeResult) -> None:
    """``responses.parquet``, ``metrics.json``, then the tables and figures, by file name."""
    pd.DataFrame(result.rows).to_parquet(out / "responses.parquet", index=False)
    write_metrics(result.metrics, out / "metrics.json")
    for name, text in result.tables.items():
        (out / name).write_text(text)
    for name, draw in result.figures.items():
        draw(out / name)
