"""A probe's requests in a dry run: the probe runs against recording models, and what it wrote
as it went (placeholder replies) is removed again; its logs stay."""

from __future__ import annotations

from benevaudit.probes.base import Probe, RunSettings, Target


def record_probe(probe: Probe, target: Target, settings: RunSettings) -> None:
    """Run ``probe`` over ``target`` (while a request log records); its result describes
    placeholder replies and is not written, and the files it added to the run directory go,
    but for audio mode's stimuli (``audio/``), which the recorded requests name."""
    out = settings.run_dir
    keep = out / "audio"
    before = set(out.rglob("*"))
    probe.run(target, settings)
    for path in sorted(set(out.rglob("*")) - before, reverse=True):
        if keep in path.parents or path == keep:
            continue
        if path.is_file() and not path.name.endswith(".log"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
