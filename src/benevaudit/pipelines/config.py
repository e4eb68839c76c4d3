"""The one place where Hydra's DictConfig meets plain Python: run directory, plain dicts, the
run's choices and sweep, its logger."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from benevaudit.llm import request_metrics, reset_request_counts  # light: no backend imported
from benevaudit.files import write_text_atomically
from benevaudit.outputs.run_record import now, run_record, write_run_record
from benevaudit.outputs.spec import LoggerBlock
from benevaudit.outputs.tracking import build_logger
from benevaudit.specs import ELSEWHERE, Spec

S = TypeVar("S", bound=Spec)
R = TypeVar("R")
COMPLETE = "_COMPLETE"


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


def run_dir(cfg: DictConfig) -> Path:
    """The run directory: Hydra's when running under Hydra, else ``paths.output_dir``."""
    if HydraConfig.initialized():
        return Path(HydraConfig.get().runtime.output_dir)
    return Path(cfg.paths.output_dir)


def output_dir(cfg: DictConfig) -> Path:
    """The run directory, made; its completion marker and the run's request counts cleared."""
    path = run_dir(cfg)
    path.mkdir(parents=True, exist_ok=True)
    (path / COMPLETE).unlink(missing_ok=True)     # a rerun into the same directory: not yet

    reset_request_counts()                        # this run's counts start at zero
    return path


def group_choices() -> dict[str, str]:
    """The config-group options this run was composed from (data=…, model=…, …)."""
    if not HydraConfig.initialized():
        return {}
    choices = HydraConfig.get().runtime.choices
    return {k: str(v) for k, v in choices.items() if not k.startswith("hydra")}


def write_metrics(metrics: dict[str, float], path: Path) -> Path:
    """``metrics.json``: flat ``{name: number}``, sorted, NaN written as null, written whole
    (temporary name + rename). A run that called models adds its request counts
    (``llm/requests_sent``, ``llm/cache_hits``, ``llm/retries``, ``llm/failed``) to the file
    and to ``metrics`` itself, so what a run returns is what it wrote."""

    for name, value in request_metrics().items():
        metrics.setdefault(name, value)
    clean = {k: (None if v != v else float(v)) for k, v in sorted(metrics.items())}
    return write_text_atomically(path, json.dumps(clean, indent=1) + "\n")


def completes(run: Callable[[DictConfig], R]) -> Callable[[DictConfig], R]:
    """A pipeline's ``run`` that leaves ``run.json`` (what ran, how it ended) and, once it
    returns, ``_COMPLETE`` in its run directory. A run stopped by an error still records it,
    where its directory exists."""
    @functools.wraps(run)
    def wrapped(cfg: DictConfig) -> R:
        started = now()
        try:
            result = run(cfg)
        except BaseException as e:
            record(cfg, started, "failed", type(e).__name__)
            raise
        record(cfg, started, "complete")
        mark_complete(run_dir(cfg))
        return result

    return wrapped


# run directory -> (the run its settings came from, {top-level key: value}): see ``adopt``
_ADOPTED: dict[Path, tuple[str, dict[str, Any]]] = {}


def adopt(out: Path, source: Path, settings: dict[str, Any]) -> None:
    """Record that the run in ``out`` runs ``settings`` (top-level keys, plain values) taken
    from the run in ``source`` over what was composed: its ``run.json`` holds them, and names
    ``source``."""
    _ADOPTED[out.resolve()] = (str(source), settings)


# run directory -> what the run settled as it ran (``run.json``'s ``ran``): see ``note_ran``
_RAN: dict[Path, dict[str, Any]] = {}


def note_ran(out: Path, facts: dict[str, Any]) -> None:
    """Record what the run in ``out`` settled as it ran (plain values): its ``run.json``
    holds them under ``ran``."""
    _RAN.setdefault(out.resolve(), {}).update(facts)


def record(cfg: DictConfig, started: str, status: str, error: str | None = None) -> None:
    """``run.json`` in the run directory, where the run got as far as making it."""
    out = run_dir(cfg)
    if not out.is_dir():
        return
    config: dict[str, Any] = {str(k): plain(cfg[k]) for k in cfg
                              if k != "hydra" and not OmegaConf.is_missing(cfg, k)}
    write_run_record(out, run_record(str(cfg.get("task_name", "")), config, group_choices(),
                                     started, now(), status, error,
                                     adopted=_ADOPTED.pop(out.resolve(), None),
                                     ran=_RAN.pop(out.resolve(), None)))


def mark_complete(out: Path) -> Path:
    """``_COMPLETE``: written last, once every file of the run is in place; ``report.py``
    leaves out a run without it (killed, or stopped by an error)."""
    marker = out / COMPLETE
    if marker.is_file():     # a generation run whose corpus is its run directory wrote its own
        return marker
    return write_text_atomically(marker, "complete\n")


def sweep_name() -> str | None:
    """The sweep directory's name for a job of a multirun, else None."""
    if not HydraConfig.initialized():
        return None
    hc = HydraConfig.get()
    return Path(str(hc.sweep.dir)).name if hc.mode == RunMode.MULTIRUN else None


def run_logger(cfg: DictConfig, out: Path, name: str) -> Any:
    """The run's experiment logger (``logger=``); on W&B a sweep's jobs share its group."""
    return build_logger(LoggerBlock.read(plain(cfg.get("logger"))), out, plain(cfg),
                        group_choices(), name, sweep_name())
