"""A config option as a run composes it: its base file and its own keys merged, interpolations
kept as written (``${detector.checkpoint}``), so a test reads what the pipeline reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

CONF = Path(__file__).resolve().parents[1] / "conf"
PRIMARY = {"detector": "detect", "generator": "generate", "probe": "probe", "data": "detect",
           "attribution": "train", "trainer": "train", "model": "train", "intervention": "train",
           "logger": "train"}


def option(group: str, name: str) -> dict[str, Any]:
    """``group=name`` composed under the group's entrypoint config, unresolved."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(PRIMARY[group], overrides=[f"{group}={name}"])
    return OmegaConf.to_container(cfg[group], resolve=False)


def smoke_train(tmp: Path, *overrides: str) -> Any:
    """train.py's config for a quick run (``experiment=smoke``) writing under ``tmp``, its
    cache beside it so the runs of a test module share one scripted sample."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose("train", overrides=[
            "experiment=smoke", f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
            f"paths.cache_dir={tmp.parent / 'cache'}", "trainer.log_every_n_steps=1",
            *overrides])


def step(name: str) -> dict[str, Any]:
    """One intervention's parameters as its ``conf/intervention/<name>.yaml`` gives them."""
    steps = yaml.safe_load((CONF / "intervention" / f"{name}.yaml").read_text())["steps"]
    return dict(steps.get(name) or {})
