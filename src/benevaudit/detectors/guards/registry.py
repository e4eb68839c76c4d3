"""The guards, built from their modules: one module per guard, each declaring its ``FORMAT``.

Adding a guard is one module here (its prompt, parser and ``FORMAT``), listed below, and one
``conf/detector/`` YAML whose ``kind`` is the format's ``kind`` (and, where its own checkpoint
needs a role-only chat template none of the others has, that template in
``llm/role_templates.py``).
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


def guard_format(kind: str) -> GuardFormat:
    if kind not in GUARD_FORMATS:
        raise ConfigError(f"unknown guard {kind!r}; valid guards: {sorted(GUARD_FORMATS)}")
    return GUARD_FORMATS[kind]
