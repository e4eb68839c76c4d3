"""Every ``experiment=`` pin of conf/experiment/: what it is for, the entrypoint it pins, the
groups it selects and the values it sets (for the configuration reference)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from hydra import compose

from docs_config import CONF, RUNS
from docs_yaml import read_comments


@dataclass
class Pin:
    name: str
    header: str
    entrypoints: list[str]
    overrides: list[str]            # the groups it selects (override /data: corpus)
    sets: list[tuple[str, Any, str]]  # (dotted key, value, comment)


def pins() -> list[Pin]:
    """Every ``experiment=`` pin: what it is for, the entrypoint it pins, what it sets."""
    found = []
    for path in sorted((CONF / "experiment").glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        header = read_comments(path).header
        users = [u for u in RUNS if f"{u}.py" in header] or pinned_by(path.stem)
        overrides = [f"{next(iter(d))}={next(iter(d.values()))}".replace("override /", "")
                     for d in raw.get("defaults", []) if isinstance(d, dict)]
        comments = read_comments(path).keys
        sets = [(k, v, comments.get(k, "")) for k, v in flatten(raw).items()
                if not k.startswith("defaults")]
        found.append(Pin(path.stem, header, users, overrides, sets))
    return found


def pinned_by(pin: str) -> list[str]:
    """The entrypoints a pin composes under without adding a top-level key they lack."""
    users = []
    for primary in RUNS:
        try:
            pinned = set(compose(primary, overrides=[f"experiment={pin}"]).keys())
        except Exception:                         # noqa: BLE001 - a pin this entrypoint refuses
            continue
        if pinned <= set(compose(primary).keys()):
            users.append(primary)
    return users


def flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and key != "defaults":
            out.update(flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out
