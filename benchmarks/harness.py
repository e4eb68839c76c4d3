"""What every ``bench_*.py`` shares so that ``make bench-smoke`` can run it and check it.

``--smoke`` runs a benchmark's own code path at a size that ends in seconds: its smoke sizes
become the argument defaults, so an option given on the command line still wins. A benchmark
ends by printing its figures on one ``FIGURES {json}`` line (names to numbers), which
``scripts/bench_smoke.py`` requires: a benchmark that crashes, or stops printing what it
measures, fails CI whatever the figures' values on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

MARK = "FIGURES "


def parse(parser: argparse.ArgumentParser, smoke: dict[str, Any],
          argv: list[str] | None = None) -> argparse.Namespace:
    """Arguments with ``--smoke`` added; under it, ``smoke`` replaces the defaults."""
    parser.add_argument("--smoke", action="store_true",
                        help="the same code path at a size that runs in seconds (make bench-smoke)")
    args = parser.parse_args(argv)
    if args.smoke:
        parser.set_defaults(**smoke)
        args = parser.parse_args(argv)
    return args


def emit(figures: dict[str, float | int | bool]) -> None:
    """The benchmark's figures, machine-readable, on the line the smoke check reads."""
    print(MARK + json.dumps({k: float(v) for k, v in figures.items()}, sort_keys=True),
          flush=True)
