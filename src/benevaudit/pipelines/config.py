"""The one place where Hydra's DictConfig meets plain Python: run directory, plain dicts, the
run's choices and sweep, its logger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from benevaudit.report.tracking import build_logger
from benevaudit.specs import ELSEWHERE, Spec

S = TypeVar("S", bound=Spec)


def plain(node: Any) -> Any:
    """A resolved plain-Python copy of a config node (dicts, lists, scalars)."""
    if isinstance(node, DictConfig) or OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return node


def validated(spec: type[S], cfg: DictConfig) -> S:
    """The run's typed spec of every top-level key, each resolved, but those read where they
    are used (``specs.ELSEWHERE``: ``paths``, ``logger``, ``hydra``); a key the spec does not
    name (``+limt=3``) is refused. A key left ``???`` is missing."""
    return spec.of({k: plain(cfg[k]) for k in cfg
                    if k not in ELSEWHERE and not OmegaConf.is_missing(cfg, k)})


def output_dir(cfg: DictConfig) -> Path:
    """The run directory: Hydra's when running under Hydra, else ``paths.output_dir``."""
    if HydraConfig.initialized():
        path = Path(HydraConfig.get().runtime.output_dir)
    else:
        path = Path(cfg.paths.output_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def group_choices() -> dict[str, str]:
    """The config-group options this run was composed from (data=…, model=…, …)."""
    if not HydraConfig.initialized():
        return {}
    choices = HydraConfig.get().runtime.choices
    return {k: str(v) for k, v in choices.items() if not k.startswith("hydra")}


def write_metrics(metrics: dict[str, float], path: Path) -> Path:
    """``metrics.json``: flat ``{name: number}``, sorted, NaN written as null."""
    clean = {k: (None if v != v else float(v)) for k, v in sorted(metrics.items())}
    path.write_text(json.dumps(clean, indent=1) + "\n")
    return path


def sweep_name() -> str | None:
    """The sweep directory's name for a job of a multirun, else None."""
    if not HydraConfig.initialized():
        return None
    hc = HydraConfig.get()
    return Path(str(hc.sweep.dir)).name if hc.mode == RunMode.MULTIRUN else None


def run_logger(cfg: DictConfig, out: Path, name: str) -> Any:
    """The run's experiment logger (``logger=``); on W&B a sweep's jobs share its group."""
    return build_logger(plain(cfg.get("logger")) or {}, out, plain(cfg), group_choices(), name,
                        sweep_name())
