"""What the report reads of a finished probe run's saved config (its ``.hydra/config.yaml``,
a plain mapping written when the run began), beside its metrics.

A saved config is a record, not the running config: a run from before a key existed lacks it,
and each reader says what such a run did instead of validating it against today's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def target_name(choices: Mapping[str, str], saved: Mapping[str, Any]) -> str:
    """The ``target`` option the run chose, else its target's name (``?``: neither saved)."""
    return choices.get("target") or str((saved.get("target") or {}).get("name", "?"))


def probe_block(saved: Mapping[str, Any]) -> Mapping[str, Any]:
    return saved.get("probe") or {}


def mode(saved: Mapping[str, Any]) -> str:
    """FairDialogue's ``audio`` or ``text`` (a run from before audio mode is text)."""
    return str(probe_block(saved).get("mode") or "text")


def ranked_lists(saved: Mapping[str, Any]) -> tuple[int, str] | None:
    """A FairDialogue recommendation run's list length K and PRAG* normaliser (a run from
    before ``prag.normalise`` normalised as printed); None for a run that ranks nothing."""
    recorded = probe_block(saved)
    if recorded.get("kind") != "recommendation":
        return None
    return int(recorded["k"]), str((recorded.get("prag") or {}).get("normalise") or "printed")


def answers_folder(saved: Mapping[str, Any]) -> str | None:
    """FairMT's ``probe.answers.path``: the folder of replies a run scored (None: none)."""
    path = (probe_block(saved).get("answers") or {}).get("path")
    return None if path is None else str(path)
