"""``probe.audio.source: dir``: the user's own recordings, as ``manifest.csv`` lists them.

The manifest (UTF-8 CSV, columns item, task, group, path, and optionally sha256) sits in
``probe.audio.path``; each path is relative to that folder and must stay inside it after
symlinks (:mod:`benevaudit.contained`), since every clip is sent to the target, which may be a
remote API. ``probe.audio.allow_outside: true`` reads absolute paths and paths out of the
folder as written. Two rows for one (item, task, group) are an error naming both lines, and
a given ``sha256`` must match the file's digest. Errors name the manifest, line and field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from benevaudit.contained import contained
from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_csv
from benevaudit.probes.audio_spec import DirAudio

DIR_COLUMNS = ("item", "task", "group", "path")
OPTIONAL = ("sha256",)
ALLOW = "probe.audio.allow_outside"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
Key = tuple[str, str, str]          # (item, task, group)


class Recording(NamedTuple):
    """One manifest row: where it is written, the clip it names (resolved), its digest."""

    where: str                      # "<manifest>, line <n>"
    path: Path
    sha256: str                     # lower-case hex, or "" where the manifest gives none


def manifest_of(spec: DirAudio) -> Path:
    """``manifest.csv`` in ``probe.audio.path``, or a ConfigError saying what is missing."""
    if not spec.path:
        raise ConfigError("probe.audio.path: source dir needs the folder holding manifest.csv")
    folder = Path(spec.path).expanduser()
    manifest = folder / "manifest.csv"
    if not manifest.is_file():
        raise ConfigError(f"probe.audio.path: no manifest.csv in {folder}; expected columns "
                          f"{list(DIR_COLUMNS)}")
    return manifest


def read_recordings(spec: DirAudio) -> tuple[Path, dict[Key, Recording]]:
    """The manifest and its rows by (item, task, group), each path checked to stay inside."""
    manifest = manifest_of(spec)
    expected = f"a CSV with columns {list(DIR_COLUMNS)} (and optionally sha256)"
    table = read_csv(manifest, None, (), expected, dtype=str, keep_default_na=False)
    missing = [c for c in DIR_COLUMNS if c not in table.columns]
    if missing:
        raise ConfigError(f"{manifest}: missing columns {missing}; expected {list(DIR_COLUMNS)}")
    option = None if spec.allow_outside else ALLOW
    first: dict[Key, int] = {}
    out: dict[Key, Recording] = {}
    for i, row in enumerate(table.to_dict("records")):
        line = i + 2                                    # the header is line 1
        key = (row["item"], row["task"], row["group"])
        if key in first:
            raise InputError(f"{manifest}: lines {first[key]} and {line} are both the "
                             f"recording of one cell (item, task, group); keep one")
        first[key] = line
        where = f"{manifest}, line {line}"
        digest = str(row.get("sha256", "")).strip().lower()
        if digest and not _DIGEST.match(digest):
            raise InputError(f"{where}, field 'sha256': not a sha256 digest (expected 64 hex "
                             "digits, or empty)")
        path = contained(manifest.parent, str(row["path"]), f"{where}, field 'path'", option)
        out[key] = Recording(where, path, digest)
    return manifest, out


def check_digest(recording: Recording, actual: str) -> None:
    """A digest given in the manifest must be the file's (sha256 of its bytes)."""
    if recording.sha256 and recording.sha256 != actual:
        raise InputError(f"{recording.where}, field 'sha256': does not match the file's sha256; "
                         "the recording changed or the row names another file")
