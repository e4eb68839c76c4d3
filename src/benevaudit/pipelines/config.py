"""The one place where Hydra's DictConfig meets plain Python: run directory, plain dicts, redaction."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeVar

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from benevaudit.specs import Spec

S = TypeVar("S", bound=Spec)

SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|passwd|credential|auth)", re.I)
SECRET_VALUE = re.compile(r"^(sk-|hf_|wandb_|ghp_|xox[bap]-)[A-Za-z0-9_\-]{8,}")


def plain(node: Any) -> Any:
    """A resolved plain-Python copy of a config node (dicts, lists, scalars)."""
    if isinstance(node, DictConfig) or OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return node


def validated(spec: type[S], cfg: DictConfig) -> S:
    """The run's typed spec, from the keys it declares, each resolved; the rest (``paths``,
    ``logger``, ``hydra``) are resolved where they are read. A key left ``???`` is missing."""
    return spec.of({k: plain(cfg[k]) for k in spec.model_fields if k in cfg})


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
