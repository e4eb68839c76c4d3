"""report.py over 1,000 run directories: wall time and peak memory, side by side with the
bootstrap switched off (what the intervals cost) and the end-to-end command (Hydra + imports).

The runs are generated here as entrypoints leave them: a fine-tuning audit grid
(8 conditions × 100 seeds: .hydra/, metrics.json, a 48-dialogue predictions.parquet, a
confusion-matrix PNG) plus 200 detection runs (10 detectors × 20 seeds).
Goal: under 10 s on 2 cores for the whole command.
Usage: python benchmarks/bench_report.py [--runs 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from report_fixtures import audit_dir  # noqa: E402
from test_report_sections import _detection_run  # noqa: E402

from harness import emit, parse  # noqa: E402


def generate(root: Path, n_runs: int) -> int:
    n_detect = n_runs // 5
    seeds = tuple(range(1, (n_runs - n_detect) // 8 + 1))
    audit_dir(root / "audit", seeds=seeds)
    for i in range(n_detect):
        detector = f"detector{i % 10}"
        _detection_run(root / "detect" / detector / f"seed{i // 10}", detector, i // 10)
    return len(seeds) * 8 + n_detect


def timed(fn) -> tuple[float, object]:
    """(wall seconds, result); CPU seconds of this process are printed alongside."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    timed.cpu = time.process_time() - cpu
    return time.perf_counter() - start, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--keep", type=Path, default=None,
                   help="generate into this directory (reused when it already holds the runs)")
    args = parse(p, {"runs": 20})
    from benevaudit.pipelines.report_files import build_report

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp) / "runs"
        if args.keep and (root / "detect").is_dir():
            print(f"reusing the run directories under {root}")
        else:
            t_gen, n = timed(lambda: generate(root, args.runs))
            print(f"generated {n} run directories in {t_gen:.1f} s under {root}")
        t_off, _ = timed(lambda: build_report([root], Path(tmp) / "off", n_resamples=0))
        cpu_off = timed.cpu
        t_on, files = timed(lambda: build_report([root], Path(tmp) / "on", n_resamples=1000))
        cpu_on = timed.cpu
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size_mb = files.html.stat().st_size / 2**20
        print(f"build_report, no bootstrap:      {t_off:6.2f} s wall, {cpu_off:5.2f} s CPU")
        print(f"build_report, 1,000 resamples:   {t_on:6.2f} s wall, {cpu_on:5.2f} s CPU  "
              f"({t_on / t_off:.2f}x; {len(files.runs)} runs, report.html {size_mb:.1f} MiB)")
        print(f"peak memory of this process:     {peak_mb:6.0f} MiB")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t_cli, proc = timed(lambda: subprocess.run(
            [sys.executable, "report.py", f"runs={root}", f"hydra.run.dir={Path(tmp) / 'cli'}"],
            cwd=ROOT, capture_output=True, text=True))
        if proc.returncode != 0:
            sys.exit(proc.stderr[-2000:])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_cli = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print(f"python report.py runs=… (whole): {t_cli:6.2f} s wall, {cpu_cli:5.2f} s CPU  "
              f"(goal < 10 s; peak {after.ru_maxrss / 1024:.0f} MiB)")
        print(f"load average while measuring: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
              f"on {os.cpu_count()} cores (wall times stretch with load; CPU times do not)")
        emit({"build_s": t_off, "bootstrap_ratio": t_on / t_off, "cli_s": t_cli,
              "peak_mib": peak_mb})


if __name__ == "__main__":
    main()
