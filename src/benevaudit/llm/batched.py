"""Chunked chat with a progress bar: one call for every caller that sends a long list.

Identical conversations in one list (FairMT-Bench dialogues that share their opening turns, a
group's answer asked under two attributes) are sent once and their reply given to each: every
backend samples a request from its own seed (``request_seed``), so the copies would get the
same reply anyway. ``keys`` says which requests are the same where the text cannot (two judge
requests holding replies to different requests, equal only in a dry run's placeholders).
Sending the rest a chunk at a time lets the request cache fill as the run goes, so an
interrupted run resumes from the last finished chunk; the bar counts chunks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tqdm.auto import tqdm

from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling


def batched_chat(model: ChatModel, conversations: Sequence[Conversation], sampling: Sampling,
                 chunk: int = 16, progress: bool = False, desc: str = "chat",
                 keys: Sequence[str] | None = None) -> list[Completion]:
    """The replies to ``conversations``, in order: each distinct one (by ``keys``, default
    the conversation's text) asked once, ``chunk`` at a time."""
    if keys is None:
        keys = [json.dumps(c, sort_keys=True, ensure_ascii=False) for c in conversations]
    elif len(keys) != len(conversations):
        raise ValueError(f"batched_chat: {len(keys)} keys for {len(conversations)} "
                         "conversations")
    first: dict[str, int] = {}                 # a conversation -> its first position
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    unique = [conversations[i] for i in first.values()]
    out: list[Completion] = []
    for start in tqdm(range(0, len(unique), chunk), disable=not progress, desc=desc,
                      unit=f"×{chunk}"):
        out.extend(model.chat(list(unique[start:start + chunk]), sampling))
    reply = dict(zip(first, out, strict=True))
    return [reply[k] for k in keys]
