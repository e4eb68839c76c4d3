"""Probe a chat model: ``python probe.py probe=cobia_hcc|cobia_scc|cobia|fairdialogue_* [overrides]``."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="probe", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from benevaudit.pipelines.cli import guarded
    from benevaudit.pipelines.probe import run

    guarded(run, cfg)


if __name__ == "__main__":
    main()
