"""A probe's invented stand-in, written as its release's files into a folder of the run.

CoBia and FairMT-Bench run without their release on an invented stand-in in the release's own
layout (``Probe.stand_in``: its files as text). It is written here, before the probe plans, so
the probe reads it through the same reader as a release, and a user finds it in the run
directory (``cobia_stand_in/``, ``fairmt_stand_in/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from benevaudit.files import write_text_atomically
from benevaudit.probes.base import Probe


def write_files(directory: Path, files: Mapping[str, str]) -> Path:
    """Each file (a path relative to ``directory``, its text) written whole; ``directory``."""
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, text)
    return directory


def write_stand_in(out: Path, probe: Probe) -> Path | None:
    """The probe's stand-in written into ``out/<its folder>``; None where it reads a release."""
    made = probe.stand_in()
    return None if made is None else write_files(out / made.folder, made.files)
