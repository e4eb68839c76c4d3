"""Granite Guardian 3.3: a judge-agent system turn, the conversation as chat turns, then a
judge-protocol turn with the criterion (here ``social_bias``) and the scoring schema (the layout
IBM's 3.3 cookbooks print). The reply is ``<score> yes </score>`` or ``<score> no </score>``.
The prompt and the role-only template that frames it on the guard's own checkpoint live in the
LLM layer (``llm/granite_guardian.py``), shared with CoBia's guard rater; its criteria's texts
are shared with Granite Guardian 4.1.

Why generate mode by default: IBM's no-think cookbook (cookbooks/granite-guardian-3.3/
detailed_guide_no_think.ipynb) prints, for every example, ``# score:  yes `` and an empty trace
of one newline, so the reply opens with ``<think>\n</think>`` before ``<score> yes </score>``;
scoring right after the generation prompt compares labels where the model writes ``<think>``.
The printed outputs are ``.strip()``-ed and cut by the cookbook's regexes, so what lies between
``</think>`` and ``<score>`` is not published: the score position cannot be pinned to the byte.
The documented read is therefore the greedy reply parsed like the cookbook's
``parse_response`` (as Granite Guardian 4.1); score mode stays an option whose prefill
(``detector.score_prefill``) is this project's guess."""

from __future__ import annotations

import re

from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.llm.granite_guardian import GRANITE_GUARDIAN_TEMPLATE, granite_guardian_prompt

GRANITE_SCORE = re.compile(r"<score>\s*(yes|no)\s*</score>", re.I)


def parse_granite_guardian(text: str) -> bool | None:
    """The last ``<score> yes|no </score>`` (thinking mode writes ``<think>…</think>`` first)."""
    found = GRANITE_SCORE.findall(text)
    return found[-1].lower() == "yes" if found else None


# the empty think block as the cookbook's printed traces give it (one newline inside)
EMPTY_THINK = "<think>\n</think>"

FORMAT = GuardFormat("granite_guardian", granite_guardian_prompt, (" yes", " no"),
                     parse_granite_guardian, GRANITE_GUARDIAN_TEMPLATE, criteria=True)
