"""Which probe a ``probe`` spec names: ``probe.family``, and for FairDialogue ``probe.kind``.

The registry (``PROBES``, a :class:`benevaudit.registry.Registry`) is read from the modules
under ``probes/``: every :class:`Probe` subclass that sets ``family`` registers itself with its
spec (``class Decision(Probe[DecisionSpec])``), so adding a probe kind adds one module, its spec
in the ``ProbeSpec`` union and one YAML (and its report section). The union refuses a family or
kind it lacks as the config is validated; the registry refuses one no module implements."""

from __future__ import annotations

from functools import cache

from benevaudit.errors import ConfigError
from benevaudit.probes.base import PROBES, Probe
from benevaudit.probes.spec import ProbeSpec

__all__ = ["PROBES", "build", "probes"]


@cache
def probes() -> dict[tuple[str, str | None], type[Probe]]:
    """(probe.family, probe.kind) -> the probe, from every module of the package (and of any
    package ``PROBES.include`` adds)."""
    PROBES.refresh()
    classes = [entry.builder() for entry in PROBES.entries().values()]
    found = {(cls.family, cls.kind): cls for cls in classes}
    return dict(sorted(found.items(), key=lambda item: (item[0][0], item[0][1] or "")))


def build(spec: ProbeSpec) -> Probe[ProbeSpec]:
    """The probe of a validated ``probe`` spec; a family or kind that no module implements is
    an error naming those that exist."""
    known = probes()
    kinds = [k for f, k in known if f == spec.family]
    kind = None if kinds == [None] else getattr(spec, "kind", None)   # CoBia, FairMT: no kind
    if (spec.family, kind) not in known:
        raise ConfigError(f"probe {spec.family}/{kind}: no probe module implements it; "
                          f"implemented: {[f'{f}/{k}' for f, k in known]}")
    return known[spec.family, kind](spec)
