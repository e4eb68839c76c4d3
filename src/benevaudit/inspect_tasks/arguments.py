"""The ``-T`` arguments every benevaudit task takes, as the overrides they stand for.

``data_path`` is the study's data (``probe.data.path``; the detection sweep's ``data.path``),
``limit`` the first N items (CoBia) or dialogues or scenarios per task, and ``options`` any
further override of the block, written as on probe.py's command line
(``-T options=probe.judge_turns=all,probe.tasks=[Jailbreak_Tips]`` or a list in a YAML/JSON
``-T`` file). The study option itself (``probe=cobia_scc``) is the task's ``probe`` argument.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# a comma that starts a new ``key=value`` (commas inside brackets belong to a list value)
SPLIT = re.compile(r",(?![^\[]*\])")


def option_list(options: str | Sequence[str] | None) -> list[str]:
    """``options`` as a list of overrides (a comma-separated string or a list)."""
    if options is None:
        return []
    if isinstance(options, str):
        return [o.strip() for o in SPLIT.split(options) if o.strip()]
    return [str(o) for o in options]


def overrides(group: str, choice: str, data_key: str, data_path: str | None,
              limit: int | None, options: str | Sequence[str] | None) -> list[str]:
    """Hydra overrides: the group's option, its data path, ``limit``, then ``options``."""
    out = [f"{group}={choice}"]
    if data_path is not None:
        out.append(f"{data_key}={data_path}")
    if limit is not None:
        out.append(f"limit={int(limit)}" if group == "probe" else f"eval.limit={int(limit)}")
    return out + option_list(options)
