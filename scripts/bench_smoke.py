"""``make bench-smoke``: every ``benchmarks/bench_*.py`` with ``--smoke``, one after another.

A benchmark passes when it exits 0 and prints one ``FIGURES {json}`` line (benchmarks/harness.py)
naming at least one figure, each a finite number. The values are not judged: on a shared or
loaded machine they say little at smoke size, and a benchmark's bars are for full runs. What
this catches is a benchmark that no longer runs, or no longer measures what it prints.

    python scripts/bench_smoke.py [--timeout 600] [bench_train.py ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "FIGURES "


def figures_of(stdout: str) -> dict[str, object] | str:
    """The figures a benchmark printed, or why they do not count."""
    lines = [ln[len(MARK):] for ln in stdout.splitlines() if ln.startswith(MARK)]
    if len(lines) != 1:
        return f"expected one '{MARK.strip()} {{json}}' line, found {len(lines)}"
    try:
        found = json.loads(lines[0])
    except json.JSONDecodeError as err:
        return f"the {MARK.strip()} line is not JSON ({err})"
    if not isinstance(found, dict) or not found:
        return f"the {MARK.strip()} line names no figures"
    bad = [k for k, v in found.items()
           if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)]
    return f"figures that are not finite numbers: {', '.join(bad)}" if bad else found


def run(bench: Path, timeout: int) -> str | None:
    """Run one benchmark at smoke size; None when it passes, else the reason it fails."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(bench), "--smoke"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"ran past {timeout} s"
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        return f"exit {proc.returncode} after {seconds:.0f} s:\n{tail}"
    found = figures_of(proc.stdout)
    if isinstance(found, str):
        return found
    print(f"ok   {bench.name:<26} {seconds:6.1f} s  {len(found)} figures: "
          f"{', '.join(sorted(found))[:120]}", flush=True)
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="benchmark files to run (default: every bench_*.py)")
    p.add_argument("--timeout", type=int, default=600, help="seconds allowed to each benchmark")
    args = p.parse_args()
    benches = ([ROOT / "benchmarks" / n for n in args.names] if args.names
               else sorted((ROOT / "benchmarks").glob("bench_*.py")))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    failed = []
    for bench in benches:
        why = run(bench, args.timeout)
        if why is not None:
            print(f"FAIL {bench.name}: {why}", file=sys.stderr, flush=True)
            failed.append(bench.name)
    if failed:
        print(f"error: {len(failed)} of {len(benches)} benchmarks failed their smoke run: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"all {len(benches)} benchmarks ran at smoke size and printed their figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
