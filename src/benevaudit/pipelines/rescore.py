"""``probe.py rescore=<probe run dir>``: judge and score the replies an earlier run saved, with
the judges of the current config, and never load the target.

The run spec is the recorded run's (its ``run.json``, else its ``.hydra/config.yaml``) for
what defines the replies: the ``probe`` block, ``target`` and ``limit``; the keys of the probe
block that set its judges (the probe's ``judge_keys``: CoBia's ``judges``, FairMT-Bench's
``judge``, ``judge_prompt``, ``judge_turns``, ``prefilter``, and both probes'
``judge_validation``; FairDialogue's recommendation, with no judge, its scoring: ``prag`` and
``fairllm``) and every other top-level key (``seed``, ``llm_cache``, ``dry_run``, …)
come from the current config. The current ``probe=`` must be the recorded run's family (and
kind). The new run directory records ``rescore`` in its ``run.json`` config and the replies
read (``responses.parquet`` with its sha256) in its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from benevaudit.errors import ConfigError, InputError
from benevaudit.outputs.run_record import RUN_RECORD
from benevaudit.pipelines.config import plain
from benevaudit.report.record import read_hydra_config, read_record
from benevaudit.specs import ELSEWHERE

RESPONSES = "responses.parquet"


def source_of(path: str) -> Path:
    """The run directory to rescore, checked to hold its replies."""
    folder = Path(path).expanduser()
    if not (folder / RESPONSES).is_file():
        raise ConfigError(f"rescore={path}: no {RESPONSES} there; expected the run directory "
                          "of a finished probe run")
    return folder


def recorded_config(folder: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The recorded run's resolved config and its config-group choices, through the one
    reader of run records: ``run.json``, else ``.hydra/config.yaml``."""
    try:
        record = read_record(folder)
    except ValueError as e:
        raise InputError(str(e)) from None
    if record is not None:
        return record.config, record.choices
    config = read_hydra_config(folder)
    if not config:
        raise ConfigError(f"rescore={folder}: neither {RUN_RECORD} nor .hydra/config.yaml "
                          "records the run's config")
    return config, {}


def family_of(block: dict[str, Any]) -> str:
    kind = block.get("kind")
    return f"{block.get('family')}{'/' + str(kind) if kind else ''}"


def rescore_data(cfg: DictConfig, folder: Path,
                 judge_keys: Callable[[dict[str, Any]], tuple[str, ...]]) -> dict[str, Any]:
    """The run spec's data: the recorded probe block with the current judge keys (named by
    ``judge_keys`` from the current config's data), the recorded target and limit, the rest of
    the current config."""
    recorded, choices = recorded_config(folder)
    current = {str(k): plain(cfg[k]) for k in cfg
               if k not in ELSEWHERE and not OmegaConf.is_missing(cfg, k)}
    block, now = recorded.get("probe"), current["probe"]
    if not isinstance(block, dict):
        raise InputError(f"{folder}: the recorded config has no probe block")
    if family_of(block) != family_of(now):
        chosen = f" (probe={choices['probe']})" if "probe" in choices else ""
        raise ConfigError(f"rescore={folder} is a {family_of(block)} run{chosen}, but this "
                          f"config's probe is {family_of(now)}; name the recorded run's probe")
    keys = judge_keys(current)
    merged = {**block, **{k: now[k] for k in keys if k in now}}
    return {**current, "probe": merged, "target": recorded.get("target"),
            "limit": recorded.get("limit")}


def saved_rows(folder: Path) -> list[dict[str, Any]]:
    """The recorded run's rows, missing values as None and numbers as Python's."""
    frame = pd.read_parquet(folder / RESPONSES)
    frame = frame.astype(object).where(frame.notna(), None)
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]
