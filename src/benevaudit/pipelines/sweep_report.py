"""The end of every multirun: the sweep's comparison, written into the sweep directory.

Registered for every entrypoint in ``conf/hydra/default.yaml`` (``hydra.callbacks``), so
``python train.py -m seed=1,2`` ends with ``runs.csv``, ``runs.parquet``, ``report.html`` and
``report.md`` next to the jobs, and prints where they are. A report that cannot be built
never fails the sweep: the jobs' own results are already on disk, and the reason is printed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.core.utils import JobStatus
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from benevaudit.pipelines.report_files import build_report

log = logging.getLogger(__name__)


class SweepReport(Callback):
    """Hydra callback: build the report of the sweep directory once every job has finished."""

    def __init__(self, enabled: bool, n_resamples: int) -> None:   # conf/hydra/default.yaml
        self.enabled = enabled
        self.n_resamples = n_resamples
        self.failed = 0

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        """After a failed job Hydra ends the sweep with that job's error and never calls
        ``on_multirun_end``: from then on, the report is rebuilt after every job, so the last
        one covers the whole sweep, the failed runs listed with their reasons."""
        if getattr(job_return, "status", None) == JobStatus.FAILED:
            self.failed += 1
        if self.failed:
            self.on_multirun_end(config)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not self.enabled:
            return
        sweep_dir = Path(str(config.hydra.sweep.dir))
        task = str(config.get("task_name", "sweep"))
        if task == "report" or not sweep_dir.is_dir():
            return
        try:
            files = build_report([sweep_dir], sweep_dir, f"{task} sweep {sweep_dir.name}",
                                 n_resamples=self.n_resamples)
        except (OSError, ValueError, KeyError) as e:  # the sweep's jobs are done; say why, go on
            print(f"sweep report not written for {sweep_dir}: {type(e).__name__}: {e}")
            return
        left = sum(r.status != "ok" for r in files.runs)
        print(f"sweep report ({len(files.runs)} runs, {left} left out): {files.html}\n"
              f"  runs table: {files.runs_csv}")
