"""``probe.py``: one entrypoint for every probe family; ``probe.family`` picks the pipeline.

Each family's pipeline is its own module (``pipelines/probe_<family>.py``) with a ``run(cfg)``
that writes the run directory and returns its metrics.
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
    from benevaudit.pipelines.inputs import check_inputs

    check_inputs(cfg, "probe")
    family = cfg.probe.get("family")
    if family not in FAMILIES:
        raise ConfigError(f"probe.family must be one of {sorted(FAMILIES)}, got {family!r}")
    return importlib.import_module(FAMILIES[family]).run(cfg)
