"""``DETECTORS``: every ``detector.kind``, its spec and how it is built
(:mod:`benevaudit.detectors.registry` says how a kind registers). It sits alone so that the
spec module, which reads its union, and the kind modules, which read the spec classes, both
import it without importing each other."""

from __future__ import annotations

from typing import Any

from benevaudit.registry import Registry

PACKAGE = __name__.rpartition(".")[0]          # benevaudit.detectors

# detector.kind -> its DetectorKind, from every module of the package (guards as a family)
DETECTORS: Registry[Any] = Registry("detector kind", PACKAGE)
