"""``probe.py``: one entrypoint for every probe family; ``probe.family`` picks the pipeline.

Each family's pipeline is its own module (``pipelines/probe_<family>.py``) with a ``run(cfg)``
that writes the run directory and returns its metrics. ``dry_run=true`` runs it against
recording models and keeps only ``requests.jsonl`` and the request counts in ``metrics.json``.
"""

from __future__ import annotations

import importlib

from omegaconf import DictConfig

from benevaudit.errors import ConfigError

FAMILIES: dict[str, str] = {
    "cobia": "benevaudit.pipelines.probe_cobia",
    "fairdialogue": "benevaudit.pipelines.probe_fairdialogue",
}


def run(cfg: DictConfig) -> dict[str, float]:
    """Check the inputs, run the family's pipeline, and mirror its metrics to the logger (W&B
    offline by default: group = the sweep, job type = probe, the config-group choices)."""
    from benevaudit.pipelines.config import group_choices, output_dir, plain
    from benevaudit.pipelines.inputs import check_inputs
    from benevaudit.pipelines.tracking import build_logger, finish_logger

    check_inputs(cfg, "probe")
    family = cfg.probe.get("family")
    if family not in FAMILIES:
        raise ConfigError(f"probe.family must be one of {sorted(FAMILIES)}, got {family!r}")
    pipeline = importlib.import_module(FAMILIES[family])
    from benevaudit.pipelines.dry_run import dry_run_of, probe_requests

    dry = dry_run_of(cfg)
    if dry is not None:
        return probe_requests(cfg, pipeline, dry)
    out = output_dir(cfg)
    choices = group_choices()
    logger = build_logger(plain(cfg.get("logger")) or {}, out, plain(cfg), choices,
                          f"probe-{choices.get('probe', family)}-{out.name}")
    try:
        metrics = pipeline.run(cfg)
        if logger:
            logger.log_metrics({k: v for k, v in metrics.items() if v == v})
        return metrics
    finally:
        if logger:
            finish_logger(logger)
