"""Dataset analysis of a generated corpus: ``python analyze.py data.path=<corpus>`` (see README)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="analyze", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from benevaudit.pipelines.analyze import run
    from benevaudit.pipelines.cli import guarded

    metrics = guarded(run, cfg)
    return metrics.get("analysis/n_dialogues", float("nan"))


if __name__ == "__main__":
    main()
