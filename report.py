"""Compare runs from their directories: ``python report.py runs=<dir, glob or list>`` (see README)."""

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(config_path="conf", config_name="report", version_base="1.3")
def main(cfg: DictConfig) -> int:
    from benevaudit.pipelines.cli import guarded
    from benevaudit.pipelines.report import run

    result = guarded(run, cfg, lightning=False)  # reading files: no Lightning import
    if result.gate:              # gate=true: a significant paired change fails the job
        sys.exit(1)
    return len(result.runs)


if __name__ == "__main__":
    main()
