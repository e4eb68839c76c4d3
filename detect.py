"""Run a detector or LLM judge over a corpus: ``python detect.py [detector=…] [overrides]`` (see README)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="detect", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from benevaudit.pipelines.cli import guarded
    from benevaudit.pipelines.detect import run

    metrics = guarded(run, cfg)
    return metrics.get("trigger/delta_OB_BB", float("nan"))


if __name__ == "__main__":
    main()
