"""Which probe a ``probe`` config block names: ``probe.family``, and for FairDialogue
``probe.kind``. Adding a probe kind adds one line here, one module and one YAML."""

from __future__ import annotations

from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.probes.base import Probe
from benevaudit.probes.cobia.probe import CoBia
from benevaudit.probes.fairdialogue.decision import Decision
from benevaudit.probes.fairdialogue.feedback import Feedback
from benevaudit.probes.fairdialogue.recommendation import Recommendation

# (probe.family, probe.kind) -> the probe; CoBia has one kind and reads no probe.kind
PROBES: dict[tuple[str, str | None], type[Probe]] = {
    ("cobia", None): CoBia,
    ("fairdialogue", "decision"): Decision,
    ("fairdialogue", "recommendation"): Recommendation,
    ("fairdialogue", "feedback"): Feedback,
}


def build(spec: dict[str, Any]) -> Probe:
    """The probe for a plain ``probe`` block; an unknown family or kind lists the valid ones."""
    family = spec.get("family")
    families = list(dict.fromkeys(f for f, _ in PROBES))
    if family not in families:
        raise ConfigError(f"probe.family must be one of {sorted(families)}, got {family!r}")
    kinds = [k for f, k in PROBES if f == family]
    kind = None if kinds == [None] else spec.get("kind")
    if (family, kind) not in PROBES:
        raise ConfigError(f"probe.kind must be one of {kinds}, got {kind!r}")
    return PROBES[family, kind](spec)
