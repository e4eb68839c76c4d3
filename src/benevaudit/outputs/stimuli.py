"""Audio mode's spoken stimuli in the run directory: each clip made for the run as
``audio/<task>/<item>__<group>.wav`` and ``audio/manifest.csv``, one row per stimulus
(``probes.fairdialogue.stimuli.MANIFEST_COLUMNS``: where each clip is, what it says, and the
intelligibility audit's figures). A clip from the TTS cache or the user's recordings stays where
it is, named in the manifest by its absolute path.

A clip already on disk with the same bytes (an earlier run in this directory made it) is left as
it is; every file is written whole (:func:`benevaudit.files.write_atomically`).
"""

from __future__ import annotations

from pathlib import Path

from benevaudit.files import write_atomically, write_text_atomically
from benevaudit.probes.fairdialogue.stimuli import MANIFEST, Stimuli


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` at ``path`` (its folder made), unless the file already holds it."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, lambda tmp: tmp.write_bytes(data))


def write_stimuli(run_dir: Path, stimuli: Stimuli | None) -> None:
    """The run's own clips and ``audio/manifest.csv``; nothing without stimuli (text mode,
    answers read from a file)."""
    if stimuli is None or not stimuli.clips:
        return
    for s in stimuli.clips:
        if s.own:
            write_bytes(run_dir / s.path, s.data)
    manifest = run_dir / MANIFEST
    manifest.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(manifest, stimuli.manifest().to_csv(index=False))
