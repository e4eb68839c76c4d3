"""A probe's requests in a dry run: the probe runs against recording models, and what it wrote
as it went (placeholder replies) is removed again; its logs stay."""

from __future__ import annotations

from typing import Any

from benevaudit.probes.base import Probe, ProbeResult, RunSettings, Target


def record_probe(probe: Probe, target: Target, settings: RunSettings,
                 rows: list[dict[str, Any]] | None = None) -> ProbeResult:
    """Run ``probe`` over ``target``, or rescore ``rows`` (a run's saved replies), while a
    request log records, and return its result, which describes placeholder replies: the
    caller keeps only audio mode's stimuli, which the recorded requests name. The files the
    probe added to the run directory go, but for ``audio/``."""
    out = settings.run_dir
    keep = out / "audio"
    before = set(out.rglob("*"))
    result = (probe.run(target, settings) if rows is None
              else probe.rescore(rows, target, settings))
    for path in sorted(set(out.rglob("*")) - before, reverse=True):
        if keep in path.parents or path == keep:
            continue
        if path.is_file() and not path.name.endswith(".log"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return result
