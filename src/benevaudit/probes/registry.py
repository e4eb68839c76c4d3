"""Which probe a ``probe`` config block names: ``probe.family``, and for FairDialogue
``probe.kind``. The registry is read from the modules under ``probes/``: every :class:`Probe`
subclass that sets ``family`` is one kind, so adding a probe kind adds one module and one YAML
(and its report section)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

import benevaudit.probes as package
from benevaudit.errors import ConfigError
from benevaudit.probes.base import Probe


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


def build(spec: dict[str, Any]) -> Probe:
    """The probe for a plain ``probe`` block; an unknown family or kind lists the valid ones."""
    known = probes()
    family = spec.get("family")
    families = list(dict.fromkeys(f for f, _ in known))
    if family not in families:
        raise ConfigError(f"probe.family must be one of {sorted(families)}, got {family!r}")
    kinds = [k for f, k in known if f == family]
    kind = None if kinds == [None] else spec.get("kind")
    if (family, kind) not in known:
        raise ConfigError(f"probe.kind must be one of {kinds}, got {kind!r}")
    return known[family, kind](spec)
