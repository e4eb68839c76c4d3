"""The guards, built from their modules: every module of this package but the shared ones
(``SHARED``) is one guard and declares its ``FORMAT``.

Adding a guard is one module here (its prompt, role-only template, parser and ``FORMAT``) and
one ``conf/detector/`` YAML whose ``kind`` is the format's ``kind``; nothing else lists it.
``GUARDS`` is a :class:`benevaudit.registry.Registry` whose modules register by declaring
``FORMAT`` (the guard's builder; its ``spec``, where it names one, is its block's spec, else
``GuardSpec``); a guard package elsewhere joins with ``GUARDS.include(package)``.
"""

from __future__ import annotations

from pathlib import Path

from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.registry import Registry

PACKAGE = __name__.rpartition(".")[0]          # benevaudit.detectors.guards
FOLDER = Path(__file__).parent
SHARED = ("base", "detector", "registry")      # the package's modules that are not guards


def guards(package: str = PACKAGE) -> Registry[GuardFormat]:
    """The registry of the guards of ``package``: each module's ``FORMAT`` by its ``kind``."""
    return Registry("guard", package, skip=SHARED, declared="FORMAT")


def guard_modules(folder: Path = FOLDER) -> list[str]:
    """The guard modules' names, sorted: the package listed, the shared modules left out
    (``folder`` is read through the package's own path)."""
    return sorted(name.rpartition(".")[2] for name in guards().modules())


def load_formats(folder: Path = FOLDER, package: str = PACKAGE) -> dict[str, GuardFormat]:
    """Each guard module's ``FORMAT`` by its ``kind``, in module order, from the modules of
    ``package`` (``folder``, its folder, is read through the package's own path); a module
    without one, or two modules with one kind, is an error that names the module."""
    registry = guards(package)
    by_module = sorted(registry, key=lambda kind: registry.entry(kind).origin)
    return {kind: registry[kind] for kind in by_module}


# every guard, as a mapping kind -> format (guards added by a plugin package included)
GUARD_FORMATS: Registry[GuardFormat] = guards()
GUARD_KINDS: tuple[str, ...] = tuple(load_formats())    # the shipped guards, in module order


def guard_format(kind: str) -> GuardFormat:
    """The format of guard ``kind`` (a validated ``detector.kind``: the spec lists these kinds)."""
    return GUARD_FORMATS[kind]
