"""The guards' role-only chat templates by name, as the CoBia probe's guard rater installs
them; each template lives in its guard's module under ``guards/``."""

from benevaudit.detectors.guards.registry import TEMPLATES, template_for

__all__ = ["TEMPLATES", "template_for"]
