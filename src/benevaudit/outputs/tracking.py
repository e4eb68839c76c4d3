"""Experiment loggers (W&B offline by default, under the run directory; CSV; or none) and what a
run mirrors to one beyond the metrics: the test confusion matrix and predictions table on W&B,
and closing the W&B run. ``metrics.json`` and ``predictions.parquet`` stay the source of truth.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benevaudit.outputs.spec import CsvLoggerSpec, LoggerSpec, NoLoggerSpec

# a credential's key: api_key, hf_token, token, password, …; not a count or a vocabulary entry
# (max_tokens, head_tokens, eos_token, tokenizer)
SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|credential|authori[sz]ation|^auth$"
                        r"|^token$|(^|[_-])(access|auth|hf|api|bearer|wandb|github|openai|"
                        r"refresh|session|id)[_-]?token$)", re.I)
SECRET_VALUE = re.compile(r"^(sk-|hf_|wandb_|ghp_|xox[bap]-)[A-Za-z0-9_\-]{8,}")


def redact(obj: Any) -> Any:
    """Replace values whose key or shape looks like a credential, so none reaches a log."""
    if isinstance(obj, dict):
        return {k: ("<redacted>" if SECRET_KEY.search(str(k)) and obj[k] else redact(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, str) and SECRET_VALUE.match(obj):
        return "<redacted>"
    return obj


def build_logger(spec: LoggerSpec, out_dir: Path, run_config: dict[str, Any],
                 choices: dict[str, str], name: str, group: str | None = None) -> Any:
    """A Lightning logger from a ``logger`` block (``conf/logger/``), or False for none. The
    resolved config is logged, secrets redacted; on W&B the run's ``group`` is its sweep and
    its job type the entrypoint (``task_name``)."""
    if isinstance(spec, NoLoggerSpec):
        return False
    if isinstance(spec, CsvLoggerSpec):
        from lightning.pytorch.loggers import CSVLogger  # Lightning: only runs that log load it

        return CSVLogger(save_dir=str(out_dir), name="csv", version="")
    from lightning.pytorch.loggers import WandbLogger  # Lightning and wandb, when asked for

    os.environ.setdefault("WANDB_SILENT", "true")
    logger = WandbLogger(save_dir=str(out_dir), project=spec.project, entity=spec.entity,
                         name=name, offline=spec.mode == "offline", mode=spec.mode,
                         tags=list(spec.tags), group=group,
                         job_type=str(run_config.get("task_name") or "run"),
                         config=redact({**run_config, "choices": choices}))
    # Lightning passes anonymous=None to wandb.init, and wandb >= 0.19 warns about any value
    # ("The anonymous setting has no effect"); the key is left out so a run prints no warning.
    logger._wandb_init.pop("anonymous", None)
    return logger


def log_test_artifacts(logger: Any, metrics: dict[str, float], labels: list[int],
                       preds: list[int], rows: list[dict[str, Any]],
                       class_names: list[str]) -> None:
    """The confusion matrix and a predictions table, where the logger is W&B."""
    from lightning.pytorch.loggers import WandbLogger  # heavy: detect and probe runs skip it

    if not isinstance(logger, WandbLogger):
        return
    import wandb  # heavy, optional: only once a W&B logger exists

    run = logger.experiment
    run.summary.update(metrics)
    keep = [i for i, y in enumerate(labels) if y >= 0]
    run.log({"test/confusion_matrix": wandb.plot.confusion_matrix(
        y_true=[labels[i] for i in keep], preds=[preds[i] for i in keep],
        class_names=class_names)})
    cols = list(rows[0]) if rows else []
    run.log({"test/predictions": wandb.Table(columns=cols,
                                             data=[[r[c] for c in cols] for r in rows])})


def finish_logger(logger: Any) -> None:
    """Close the W&B run (a multirun runs every job in one process)."""
    from lightning.pytorch.loggers import WandbLogger  # heavy: detect and probe runs skip it

    if isinstance(logger, WandbLogger):
        import wandb  # heavy, optional: only once a W&B logger exists

        wandb.finish()
