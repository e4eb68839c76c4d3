"""Entrypoint glue: run a pipeline, turning input errors into one line on stderr and exit code 2.

What counts as an input error is narrow on purpose: benevaudit's own errors (configuration,
input files and corpora, missing optional packages), a path that is not there or cannot be
opened, and a mandatory config value left unset. Everything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from benevaudit.errors import BenevauditError

USER_ERRORS: tuple[type[BaseException], ...] = (
    BenevauditError,          # ConfigError, InputError, CorpusError, DependencyError
    FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError,
    MissingMandatoryValue,    # `ckpt: ???` left unset
)


def quiet_lightning() -> None:
    """Lightning adds its own console handler; under Hydra that prints every line twice."""
    import lightning.pytorch  # noqa: F401  (its handlers are added on import)

    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).handlers.clear()


def one_line(error: BaseException) -> str:
    """The error's message on one line (a multi-line message is joined with '; ')."""
    text = str(error).strip() or type(error).__name__
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def guarded(run: Callable[[DictConfig], Any], cfg: DictConfig, lightning: bool = True) -> Any:
    """``run(cfg)``; a user error prints ``error: <message>`` on stderr and exits with code 2.

    Each ``run`` validates its typed run spec first (``DetectRun``, ``TrainRun``, …: every
    number, flag and file of its config), so what reaches this handler from a bad input has
    happened before any model work. ``lightning=False`` skips importing Lightning, for
    entrypoints that train nothing.
    """
    if lightning:
        quiet_lightning()
    try:
        result = run(cfg)
    except USER_ERRORS as e:
        message = one_line(e)
        print(f"error: {message}", file=sys.stderr)
        out, multirun = hydra_job()
        if out is not None and out.is_dir():      # the report lists the run with this reason
            (out / "error.txt").write_text(message + "\n", encoding="utf-8")
        if multirun:       # fail this job only: the sweep goes on, then ends non-zero
            raise JobFailed(message) from None
        sys.exit(2)
    return result


class JobFailed(Exception):
    """A multirun job stopped by a user error (already printed as one line)."""


def hydra_job() -> tuple[Path | None, bool]:
    """(this job's run directory, whether it is one job of a multirun), outside Hydra (None,
    False)."""
    if not HydraConfig.initialized():
        return None, False
    hc = HydraConfig.get()
    return Path(hc.runtime.output_dir), hc.mode == RunMode.MULTIRUN
