"""The benchmark smoke check: what counts as a benchmark having printed its figures."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


smoke = load(ROOT / "scripts" / "bench_smoke.py", "bench_smoke")
harness = load(ROOT / "benchmarks" / "harness.py", "harness")


def test_figures_line_is_required_once_and_numeric() -> None:
    assert smoke.figures_of('noise\nFIGURES {"a": 1.5, "b": 2}\n') == {"a": 1.5, "b": 2}
    assert "found 0" in smoke.figures_of("throughput 1.2x\n")
    assert "found 2" in smoke.figures_of('FIGURES {"a": 1}\nFIGURES {"a": 1}\n')
    assert "names no figures" in smoke.figures_of("FIGURES {}\n")
    assert "not JSON" in smoke.figures_of("FIGURES {a: 1}\n")
    assert "a, b" in smoke.figures_of('FIGURES {"a": NaN, "b": "fast", "c": 1}\n')


def test_emit_prints_what_the_check_reads(capsys) -> None:
    harness.emit({"ratio": 1.25, "n": 3})
    assert smoke.figures_of(capsys.readouterr().out) == {"n": 3.0, "ratio": 1.25}


def test_smoke_sizes_are_defaults_an_option_overrides() -> None:
    def parser() -> argparse.ArgumentParser:
        p = argparse.ArgumentParser()
        p.add_argument("--n", type=int, default=160)
        p.add_argument("--batch", type=int, default=16)
        return p

    sizes = {"n": 16, "batch": 8}
    assert vars(harness.parse(parser(), sizes, [])) == {"n": 160, "batch": 16, "smoke": False}
    assert vars(harness.parse(parser(), sizes, ["--smoke"])) == {"n": 16, "batch": 8, "smoke": True}
    assert harness.parse(parser(), sizes, ["--smoke", "--n", "4"]).n == 4



def test_every_benchmark_uses_the_harness() -> None:
    """A benchmark written without ``--smoke`` through the harness, or without ``emit``, would
    only fail once CI's smoke tier ran it: caught here, in the default tier."""
    lacking = [p.name for p in sorted((ROOT / "benchmarks").glob("bench_*.py"))
               if not all(f"{call}(" in p.read_text() for call in ("parse", "emit"))]
    assert not lacking, f"benchmarks not on benchmarks/harness.py: {lacking}"
