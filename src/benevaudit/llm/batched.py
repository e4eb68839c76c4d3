"""Chunked chat with a progress bar: one call for every caller that sends a long list.

Sending the conversations a chunk at a time lets the request cache fill as the run goes, so an
interrupted run resumes from the last finished chunk; the bar counts chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

from tqdm.auto import tqdm

from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling


def batched_chat(model: ChatModel, conversations: Sequence[Conversation], sampling: Sampling,
                 chunk: int = 16, progress: bool = False, desc: str = "chat") -> list[Completion]:
    """The replies to ``conversations``, in order, asked ``chunk`` at a time."""
    out: list[Completion] = []
    for start in tqdm(range(0, len(conversations), chunk), disable=not progress, desc=desc,
                      unit=f"×{chunk}"):
        out.extend(model.chat(list(conversations[start:start + chunk]), sampling))
    return out
