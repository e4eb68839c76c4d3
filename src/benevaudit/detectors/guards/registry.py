"""The guards, built from their modules: one module per guard, each declaring its ``FORMAT``.

Adding a guard is one module here (its prompt, parser, template and ``FORMAT``), listed below,
and one ``conf/detector/`` YAML whose ``kind`` is the format's ``kind``.
"""

from __future__ import annotations

from benevaudit.detectors.guards import (
    granite_guardian33,
    granite_guardian41,
    llama_guard3,
    qwen3guard,
    wildguard,
)
from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.errors import ConfigError

GUARD_FORMATS: dict[str, GuardFormat] = {
    m.FORMAT.kind: m.FORMAT
    for m in (llama_guard3, granite_guardian33, granite_guardian41, wildguard, qwen3guard)
}
GUARD_KINDS: tuple[str, ...] = tuple(GUARD_FORMATS)
# role-only chat templates by name, for the guards whose own checkpoint needs one
TEMPLATES: dict[str, str] = {f.template_name: f.template for f in GUARD_FORMATS.values()
                             if f.template_name and f.template}


def guard_format(kind: str) -> GuardFormat:
    if kind not in GUARD_FORMATS:
        raise ConfigError(f"unknown guard {kind!r}; valid guards: {sorted(GUARD_FORMATS)}")
    return GUARD_FORMATS[kind]


def template_for(name: str | None) -> str | None:
    """The named template, None for None; an unknown name lists the valid ones."""
    if name is None:
        return None
    if name not in TEMPLATES:
        raise ConfigError(f"unknown guard template {name!r}; valid: {sorted(TEMPLATES)}")
    return TEMPLATES[name]
