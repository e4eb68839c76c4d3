"""Which ``target`` options hear audio, for the error a text-only target gets in audio mode.

The options are read from the ``conf/target/`` folder of the running configuration (Hydra's
primary config source), else the checkout's own ``conf/``: an option hears audio when its
``llm`` block says ``audio_in: true``.
"""

from __future__ import annotations

from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

import benevaudit


def conf_dir() -> Path:
    """The primary config folder of the running Hydra app, else the checkout's ``conf/``."""
    if HydraConfig.initialized():
        for source in HydraConfig.get().runtime.config_sources:
            if source.provider == "main" and source.schema == "file":
                return Path(source.path)
    return Path(benevaudit.__file__).resolve().parents[2] / "conf"


def audio_targets(conf: Path | None = None) -> list[str]:
    """Names of the target options whose llm block has ``audio_in: true``."""
    folder = (conf or conf_dir()) / "target"
    names = []
    for file in sorted(folder.glob("*.yaml")):
        block = OmegaConf.to_container(OmegaConf.load(file))
        llm = block.get("llm") if isinstance(block, dict) else None
        if isinstance(llm, dict) and llm.get("audio_in") is True:
            names.append(file.stem)
    return names


def audio_target_error(target: str) -> str:
    """The one line a text-only target gets when ``probe.mode=audio``."""
    return (f"probe.mode=audio needs a target that hears audio (target.llm.audio_in=true); "
            f"target {target!r} does not. Audio-capable targets: "
            f"{', '.join(audio_targets()) or '(none in conf/target)'}")
