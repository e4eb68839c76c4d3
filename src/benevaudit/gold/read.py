"""Which gold set a ``data`` block names, its files, and its records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benevaudit.gold.diasafety import diasafety_files, read_diasafety
from benevaudit.gold.edos import edos_file, read_edos
from benevaudit.gold.labelled import read_labelled
from benevaudit.gold.spec import DiaSafetyDataSpec, EdosDataSpec, GoldDataSpec
from benevaudit.schema import Dialogue

GOLD_KINDS: tuple[str, ...] = ("edos", "diasafety", "labelled")


def is_gold(data: Any) -> bool:
    """Whether a ``data`` block (a spec, or a plain dict) names a human-labelled gold set."""
    kind = data.get("kind") if isinstance(data, dict) else getattr(data, "kind", None)
    return kind in GOLD_KINDS


def gold_files(spec: GoldDataSpec) -> list[Path]:
    """The files a gold set's reader opens (their sha256 goes in the run's ``inputs.json``)."""
    if isinstance(spec, EdosDataSpec):
        return [edos_file(spec)]
    if isinstance(spec, DiaSafetyDataSpec):
        return diasafety_files(spec)
    return [Path(spec.path).expanduser()]


def read_gold(spec: GoldDataSpec) -> list[Dialogue]:
    if isinstance(spec, EdosDataSpec):
        return read_edos(spec)
    if isinstance(spec, DiaSafetyDataSpec):
        return read_diasafety(spec)
    return read_labelled(spec)
