"""The configuration of an Inspect AI task: probe.py's or detect.py's, composed from ``conf/``
as the command line composes it, and validated by the same run spec.

An Inspect task takes its options as ``-T`` arguments; they arrive here as Hydra overrides
(``probe=fairmt``, ``probe.data.path=<clone>``, ``limit=5``), so a task reads exactly the block
``python probe.py`` would read with the same words. ``paths`` point at a folder of the task's
own (the stand-in data a probe writes when it has no data path goes there) and the request
cache is off: Inspect keeps its own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from benevaudit.pipelines.config import validated
from benevaudit.pipelines.detect import DetectRun
from benevaudit.pipelines.probe import ProbeRun
from benevaudit.pipelines.targets import conf_dir


def composed(name: str, overrides: Sequence[str]) -> tuple[DictConfig, Path]:
    """``conf/<name>.yaml`` with ``overrides``, and the folder its run writes into."""
    work = Path(tempfile.mkdtemp(prefix=f"benevaudit-inspect-{name}-"))
    fixed = [f"paths.root_dir={work}", f"paths.output_dir={work}", "llm_cache=null",
             "logger=none", "progress=false"]
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return compose(name, overrides=[*fixed, *overrides]), work


def probe_run(overrides: Sequence[str]) -> tuple[ProbeRun, Path]:
    """probe.py's validated config under ``overrides``, and the run folder."""
    cfg, work = composed("probe", overrides)
    return validated(ProbeRun, cfg), work


def detect_run(overrides: Sequence[str]) -> tuple[DetectRun, DictConfig, Path]:
    """detect.py's validated config under ``overrides``, the composed config (its corpus
    readers take ``paths.cache_dir``) and the run folder."""
    cfg, work = composed("detect", overrides)
    return validated(DetectRun, cfg), cfg, work
