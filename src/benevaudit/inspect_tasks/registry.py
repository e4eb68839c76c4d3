"""The ``inspect_ai`` entry point (pyproject.toml): Inspect imports this module to find
benevaudit's tasks, so ``inspect eval benevaudit/<task>`` runs them.

Where Inspect AI is not installed this module registers nothing, so the package imports and
tests without it.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from benevaudit.inspect_tasks import cobia as _cobia
from benevaudit.inspect_tasks import detection as _detection
from benevaudit.inspect_tasks import fairdialogue as _fairdialogue
from benevaudit.inspect_tasks import fairmt as _fairmt

TASKS = {"cobia": _cobia.cobia, "fairmt": _fairmt.fairmt,
         "fairdialogue": _fairdialogue.fairdialogue, "detection": _detection.detection}


def register() -> dict[str, Any]:
    """Each task function under Inspect's ``@task``, by name (``benevaudit/<name>``)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import task

    return {name: task(name=name)(fn) for name, fn in TASKS.items()}


if find_spec("inspect_ai") is not None:
    globals().update(register())
