"""Granite Guardian 3.3: a judge-agent system turn, the conversation as chat turns, then a
judge-protocol turn with the criterion (here ``social_bias``) and the scoring schema (the layout
IBM's 3.3 cookbooks print). The reply is ``<score> yes </score>`` or ``<score> no </score>``.
The prompt and the role-only template that frames it on the guard's own checkpoint live in the
LLM layer (``llm/granite_guardian.py``), shared with CoBia's guard rater; its criteria's texts
are shared with Granite Guardian 4.1."""

from __future__ import annotations

import re

from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.llm.granite_guardian import GRANITE_GUARDIAN_TEMPLATE, granite_guardian_prompt

GRANITE_SCORE = re.compile(r"<score>\s*(yes|no)\s*</score>", re.I)


def parse_granite_guardian(text: str) -> bool | None:
    """The last ``<score> yes|no </score>`` (thinking mode writes ``<think>…</think>`` first)."""
    found = GRANITE_SCORE.findall(text)
    return found[-1].lower() == "yes" if found else None


FORMAT = GuardFormat("granite_guardian", granite_guardian_prompt,
                     ("<score> yes", "<score> no"), parse_granite_guardian, "score", 24,
                     GRANITE_GUARDIAN_TEMPLATE, criteria=True)
