"""One gold item as a dialogue record: a post or reply as the agent's turn, with an optional
user turn before it, demographics ``unspecified`` (a gold set states none)."""

from __future__ import annotations

import re
from typing import Any

from benevaudit.errors import InputError
from benevaudit.schema import AGENT_FIELDS, SPLITS, USER_FIELDS, Dialogue, Turn

UNSPECIFIED = "unspecified"
USER = {k: UNSPECIFIED for k in USER_FIELDS}
# Split names a release may use for validation.
SPLIT_NAMES = {**{s: s for s in SPLITS}, "dev": "validation", "val": "validation",
               "valid": "validation"}
SPLIT_LIKE = re.compile(r"^\S{1,12}$")
assert set(AGENT_FIELDS) <= set(USER_FIELDS)


def split_name(raw: Any, where: str) -> str | None:
    """The record's split from a release's name for it (``dev``/``val`` → ``validation``)."""
    if raw is None or (isinstance(raw, float) and raw != raw):
        return None
    value = str(raw).strip()
    name = SPLIT_NAMES.get(value.lower())
    if name is None:
        # a word is quoted; a longer value may be an item's text (a mistaken column)
        shown = repr(value) if SPLIT_LIKE.match(value) else f"of {len(value)} characters"
        raise InputError(f"{where}: split {shown} is none of {sorted(SPLIT_NAMES)}")
    return name


def gold_dialogue(item_id: str, label: str | None, text: Any, where: str, *, source: str,
                  context: Any = None, split: str | None = None,
                  meta: dict[str, Any] | None = None) -> Dialogue:
    """The record of one item; an empty or non-text ``text`` is an error naming ``where``
    (a file and row), never quoting the item."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: the text is empty or not text")
    turns = [Turn("agent", text)]
    if context is not None and not (isinstance(context, float) and context != context):
        if not isinstance(context, str):
            raise InputError(f"{where}: the context is not text")
        if context.strip():
            turns.insert(0, Turn("user", context))
    return Dialogue(id=item_id, label=label, role=source, generator=source, user=dict(USER),
                    agent=None, turns=tuple(turns), split=split,
                    meta={"source": source, **(meta or {})})
