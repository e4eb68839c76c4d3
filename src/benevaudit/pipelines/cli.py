"""Entrypoint glue: run a pipeline, turning input errors into one line on stderr and exit code 2."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from benevaudit.errors import BenevauditError


def quiet_lightning() -> None:
    """Lightning adds its own console handler; under Hydra that prints every line twice."""
    import lightning.pytorch  # noqa: F401  (its handlers are added on import)

    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).handlers.clear()


def guarded(run: Callable[[DictConfig], Any], cfg: DictConfig) -> Any:
    quiet_lightning()
    try:
        return run(cfg)
    except (BenevauditError, FileNotFoundError, MissingMandatoryValue) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
