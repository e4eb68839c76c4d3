"""The guards, built from their modules: every module of this package but the shared ones
(``SHARED``) is one guard and declares its ``FORMAT``.

Adding a guard is one module here (its prompt, role-only template, parser and ``FORMAT``) and
one ``conf/detector/`` YAML whose ``kind`` is the format's ``kind``; nothing else lists it.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from benevaudit.detectors.guards.base import GuardFormat

PACKAGE = __name__.rpartition(".")[0]          # benevaudit.detectors.guards
FOLDER = Path(__file__).parent
SHARED = ("base", "detector", "registry")      # the package's modules that are not guards


def guard_modules(folder: Path = FOLDER) -> list[str]:
    """The guard modules' names, sorted: the package listed, the shared modules left out."""
    names = (info.name for info in pkgutil.iter_modules([str(folder)]))
    return sorted(n for n in names if n not in SHARED)


def load_formats(folder: Path = FOLDER, package: str = PACKAGE) -> dict[str, GuardFormat]:
    """Each guard module's ``FORMAT`` by its ``kind``, from the modules of ``package`` (found in
    ``folder``); a module without one, or two modules with one kind, is an error that names the
    module."""
    formats: dict[str, GuardFormat] = {}
    for name in guard_modules(folder):
        module = importlib.import_module(f"{package}.{name}")
        fmt = getattr(module, "FORMAT", None)
        if not isinstance(fmt, GuardFormat):
            raise TypeError(f"guard module {module.__name__} declares no FORMAT (a GuardFormat); "
                            f"every module of {package} but {list(SHARED)} is a guard")
        if fmt.kind in formats:
            raise TypeError(f"guard module {module.__name__}: kind {fmt.kind!r} is taken")
        formats[fmt.kind] = fmt
    return formats


GUARD_FORMATS: dict[str, GuardFormat] = load_formats()
GUARD_KINDS: tuple[str, ...] = tuple(GUARD_FORMATS)


def guard_format(kind: str) -> GuardFormat:
    """The format of guard ``kind`` (a validated ``detector.kind``: the spec lists these kinds)."""
    return GUARD_FORMATS[kind]
