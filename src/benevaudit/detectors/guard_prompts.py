"""The guard prompt the CoBia probe's guard rater asks (Granite Guardian 3.3's ``social_bias``
check); each guard's own prompt, parser and template live in its module under ``guards/``."""

from benevaudit.detectors.guards.granite_guardian33 import granite_guardian_prompt

__all__ = ["granite_guardian_prompt"]
