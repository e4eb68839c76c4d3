"""Which probe a ``probe`` spec names: ``probe.family``, and for FairDialogue ``probe.kind``.
The registry is read from the modules under ``probes/``: every :class:`Probe` subclass that
sets ``family`` is one kind, so adding a probe kind adds one module, its spec in the
``ProbeSpec`` union and one YAML (and its report section). The union refuses a family or kind
it lacks as the config is validated; the registry refuses one no module implements."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import benevaudit.probes as package
from benevaudit.errors import ConfigError
from benevaudit.probes.base import Probe
from benevaudit.probes.spec import ProbeSpec


@cache
def probes() -> dict[tuple[str, str | None], type[Probe]]:
    """(probe.family, probe.kind) -> the probe, from every module of the package."""
    modules = {importlib.import_module(info.name).__name__
               for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")}
    found: dict[tuple[str, str | None], type[Probe]] = {}
    pending = list(Probe.__subclasses__())
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if not cls.family or cls.__module__ not in modules:
            continue
        if (cls.family, cls.kind) in found:
            raise ConfigError(f"probe {cls.family}/{cls.kind} is defined twice: in "
                              f"{found[cls.family, cls.kind].__module__} and {cls.__module__}")
        found[cls.family, cls.kind] = cls
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
