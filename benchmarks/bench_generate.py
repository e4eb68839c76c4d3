"""Benchmark: the scripted generator at full scale (362,880 dialogues) through ``generate.py``.

Goal: about 3 minutes on 2 CPU cores, one process. Prints dialogues/s, wall time, peak RSS, and
the corpus size on disk. ``--limit N`` runs a prefix; ``--profile`` profiles composition only.

    .venv/bin/python benchmarks/bench_generate.py [--limit 362880] [--out /tmp/bench-corpus]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import emit, parse

ROOT = Path(__file__).resolve().parents[1]


def profile_composition(n: int) -> None:
    from benevaudit.generation.grid import iter_conditions
    from benevaudit.generation.scripted import compose_dialogue

    conditions = list(iter_conditions(limit=n))
    start = time.perf_counter()
    with cProfile.Profile() as prof:
        for c in conditions:
            compose_dialogue(c)
    seconds = time.perf_counter() - start
    print(f"compose only: {n / seconds:,.0f} dialogues/s (under cProfile)")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(12)


def bench(limit: int, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    run_dir = Path(tempfile.mkdtemp(prefix="bench-generate-run-"))
    cmd = [sys.executable, str(ROOT / "generate.py"), "generator=scripted", f"limit={limit}",
           f"out_dir={out}", "progress=false", f"hydra.run.dir={run_dir}"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    size_mib = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20
    print(f"dialogues: {limit:,}  wall: {seconds:.1f} s  rate: {limit / seconds:,.0f} dialogues/s  "
          f"peak RSS: {rss_mib:,.0f} MiB  on disk: {size_mib:,.0f} MiB  "
          f"target 180 s -> ratio {seconds / 180 * 362_880 / limit:.2f} (scaled to full size)")
    emit({"dialogues_per_s": limit / seconds, "peak_rss_mib": rss_mib, "disk_mib": size_mib})
    shutil.rmtree(run_dir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=362_880)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "bench-corpus")
    ap.add_argument("--profile", type=int, default=0, help="profile composing N dialogues")
    ap.add_argument("--keep", action="store_true", help="keep the corpus directory")
    args = parse(ap, {"limit": 300})
    if args.profile:
        profile_composition(args.profile)
        return
    bench(args.limit, args.out)
    if not args.keep:
        shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
