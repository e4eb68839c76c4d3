"""Evaluate a frozen classifier on an (edited) test split: ``python evaluate.py ckpt=<run dir> [overrides]`` (see README)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="evaluate", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from benevaudit.pipelines.cli import guarded
    from benevaudit.pipelines.evaluate import run

    metrics = guarded(run, cfg)
    return metrics.get("test/macro_f1", float("nan"))


if __name__ == "__main__":
    main()
