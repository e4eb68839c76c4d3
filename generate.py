"""Write a BenevDial-style corpus: ``python generate.py generator=scripted [limit=N] [out_dir=...]``."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="generate", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from benevaudit.pipelines.cli import guarded
    from benevaudit.pipelines.generate import run

    metrics = guarded(run, cfg)
    return metrics.get("generate/dialogues", float("nan"))


if __name__ == "__main__":
    main()
