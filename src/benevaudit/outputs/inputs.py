"""``inputs.json``: which files a run read, each with its size and sha256, so a figure quoted
from the run can be traced to the exact release or corpus it was measured on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from benevaudit.files import write_text_atomically

CHUNK = 1 << 20


def sha256_of(path: Path) -> str:
    """The file's sha256, read in 1 MiB chunks (a corpus may be gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def file_record(path: Path) -> dict[str, object]:
    resolved = path.expanduser().resolve()
    return {"path": str(resolved), "bytes": resolved.stat().st_size,
            "sha256": sha256_of(resolved)}


def write_inputs(out: Path, read: Mapping[str, tuple[str, Sequence[Path]]]) -> Path:
    """``inputs.json``: ``{role: {kind, files: [{path, bytes, sha256}]}}`` for each data block
    a run read (``data``, ``external/edos``, …)."""
    record = {role: {"kind": kind, "files": [file_record(p) for p in files]}
              for role, (kind, files) in read.items()}
    return write_text_atomically(out / "inputs.json", json.dumps(record, indent=2) + "\n")


def add_inputs(out: Path, read: Mapping[str, tuple[str, Sequence[Path]]]) -> Path | None:
    """Add roles to ``inputs.json``, keeping the ones this run wrote before (a probe's release
    beside its judge-validation set); nothing to add writes nothing."""
    if not read:
        return None
    file = out / "inputs.json"
    record = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    record.update({role: {"kind": kind, "files": [file_record(p) for p in files]}
                   for role, (kind, files) in read.items()})
    return write_text_atomically(file, json.dumps(record, indent=2) + "\n")
