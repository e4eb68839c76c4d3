"""What every guard module declares: its ``FORMAT``, the prompt, labels, parser and template.

A guard is one module of this package (its prompt, role-only template, parser and ``FORMAT``)
and one ``conf/detector/`` YAML whose ``kind`` is the format's ``kind``; the registry finds the
module by listing the package.

A guard prompt is written as chat messages with the standard roles, so any chat model can run
it (the embedded SmolLM2 applies its own template). The guards' shipped templates *build* the
guard instruction from raw chat turns; benevaudit writes that instruction itself, so on the
guard's own checkpoint (``llm.model`` equals ``checkpoint``) the messages are only framed by a
role-only template reproducing the guard's documented layout (the format's ``template``,
written in the guard's module); any other model keeps its own.

Verdicts are read tolerantly (case, spacing, extra lines); a reply that states no verdict is
``None`` (invalid), never a class. Each guard's format comes from its own published material,
named in its module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benevaudit.llm import Conversation
from benevaudit.schema import Turn


@dataclass(frozen=True)
class GuardFormat:
    """A guard's prompt, its two label continuations (positive first) and its verdict parser.
    How it is read (``mode``, the reply cap, score mode's prefill) is its YAML's: each value
    is written once, in ``conf/detector/<guard>.yaml``."""

    kind: str                  # the detector.kind that selects it
    prompt: Callable[..., Conversation]   # (turns), or (turns, criteria) where ``criteria``
    choices: tuple[str, str]
    parse: Callable[[str], bool | None]
    template: str | None = None  # Jinja, role-only, for its own checkpoint (None: the shipped one)
    categories: Callable[[str], tuple[str, ...]] | None = None  # what a reply says it found
    criteria: bool = False     # whether the prompt takes a criterion (Granite Guardian)
    lenient: Callable[[str], bool | None] | None = None  # a laxer reader than the released one
    spec: type | None = None   # its block's spec, a GuardSpec with its own kind (None: GuardSpec)

def speaker(turn: Turn, user: str, agent: str) -> str:
    """The name a guard's prompt writes before a turn."""
    return user if turn.speaker == "user" else agent
