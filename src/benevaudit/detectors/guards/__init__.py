"""Generative safety guards: one module per guard (its prompt, role-only template, parser and
format), the registry built by listing them, and the one ``GuardDetector`` that reads any of
them."""

from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.detectors.guards.detector import GuardDetector, two_way
from benevaudit.detectors.guards.registry import GUARD_FORMATS, GUARD_KINDS, guard_format

__all__ = ["GUARD_FORMATS", "GUARD_KINDS", "GuardDetector", "GuardFormat", "guard_format",
           "two_way"]
