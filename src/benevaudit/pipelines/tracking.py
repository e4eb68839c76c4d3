"""Experiment loggers: W&B (offline by default, under the run directory), CSV, or none.
What a run logs to one, and closing it, is ``report/tracking.py``.

W&B mirrors the run; ``metrics.json`` and ``predictions.parquet`` stay the source of truth.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

from benevaudit.errors import ConfigError
from benevaudit.pipelines.config import redact


def build_logger(spec: dict[str, Any], out_dir: Path, run_config: dict[str, Any],
                 choices: dict[str, str], name: str) -> Any:
    """A Lightning logger, or False for none. The resolved config is logged, secrets redacted."""
    kind = spec.get("kind", "none")
    if kind == "none":
        return False
    if kind == "csv":
        from lightning.pytorch.loggers import CSVLogger  # Lightning: only runs that log load it

        return CSVLogger(save_dir=str(out_dir), name="csv", version="")
    if kind == "wandb":
        from lightning.pytorch.loggers import WandbLogger  # Lightning and wandb, when asked for

        os.environ.setdefault("WANDB_SILENT", "true")
        mode = spec.get("mode", "offline")
        group, job_type = wandb_identity(run_config)
        logger = WandbLogger(save_dir=str(out_dir), project=spec.get("project", "benevaudit"),
                             entity=spec.get("entity"), name=name, offline=mode == "offline",
                             mode=mode, tags=list(spec.get("tags") or []),
                             group=group, job_type=job_type,
                             config=redact({**run_config, "choices": choices}))
        return logger
    raise ConfigError(f"logger.kind must be one of wandb, csv, none; got {kind!r}")


def wandb_identity(run_config: dict[str, Any]) -> tuple[str | None, str]:
    """(group, job_type) of a run in W&B: the sweep it belongs to (its sweep directory's name,
    None for a single run) and the entrypoint, so the UI groups a sweep and filters by task."""
    job_type = str(run_config.get("task_name") or "run")
    if not HydraConfig.initialized():
        return None, job_type
    hc = HydraConfig.get()
    group = Path(str(hc.sweep.dir)).name if hc.mode == RunMode.MULTIRUN else None
    return group, job_type
