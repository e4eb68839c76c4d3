"""The no-model backend: deterministic replies, so every LLM consumer can be tested in seconds.

Replies come from, in order of precedence, a callable ``respond(conversation, sampling)``, a
list of responses handed out in request order (cycling), or by default a reply composed from
the last user message and a fixed word bank with a per-conversation seed, so the same
conversation and seed always give the same text and different ones usually differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

import numpy as np

from benevaudit.llm.base import (
    ChatModel,
    Completion,
    Conversation,
    Sampling,
    check_conversations,
    request_seed,
)

Respond = Callable[[Conversation, Sampling], str]
Scorer = Callable[[Conversation, Sequence[str]], Sequence[float]]

_BANK = ("I", "hear", "you", "and", "we", "can", "look", "at", "options", "together", "that",
         "sounds", "hard", "let", "us", "take", "one", "step", "first", "what", "would", "help")


def conversation_seed(conversation: Conversation, seed: int) -> int:
    """A 64-bit seed derived from the messages and the sampling seed (no global RNG)."""
    blob = json.dumps([conversation, seed], sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(blob.encode("utf-8")).digest()[:8], "little")


def default_reply(conversation: Conversation, sampling: Sampling) -> str:
    """A short reply echoing words of the last user turn among word-bank words."""
    rng = np.random.default_rng(conversation_seed(conversation, sampling.seed))
    user_turns = [m["content"] for m in conversation if m["role"] == "user"]
    echo = user_turns[-1].split() if user_turns else []
    pool = list(_BANK) + echo
    n_words = min(sampling.max_tokens or 12, int(rng.integers(4, 13)))
    return " ".join(pool[i] for i in rng.integers(0, len(pool), size=n_words))


class ScriptedChatModel(ChatModel):
    """A ``ChatModel`` with no model behind it; counts its calls so tests can check caching."""

    name = "scripted"

    def __init__(self, responses: Sequence[str] | Respond | None = None,
                 scorer: Scorer | None = None, model: str = "scripted") -> None:
        if isinstance(responses, str):
            raise TypeError("responses must be a list of strings or a callable, not one string")
        if responses is not None and not callable(responses) and len(responses) == 0:
            raise ValueError("responses must not be empty (omit it for the default replies)")
        self.responses = responses
        self.scorer = scorer
        self.model_id = model
        self.template_hash = "none"
        self.chat_calls = 0       # backend calls, not conversations
        self.score_calls = 0
        self._served = 0          # position in a list of responses

    def _reply(self, conversation: Conversation, sampling: Sampling) -> str:
        if self.responses is None:
            return default_reply(conversation, sampling)
        if callable(self.responses):
            return self.responses(conversation, sampling)
        text = self.responses[self._served % len(self.responses)]
        self._served += 1
        return text

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        self.chat_calls += 1
        out = []
        for conv in conversations:
            text, finish = self._reply(conv, sampling), "stop"
            for stop in sampling.stop:
                text = text.split(stop)[0] if stop else text
            words = text.split(" ")
            if sampling.max_tokens is not None and len(words) > sampling.max_tokens:  # a word: a token
                text, finish = " ".join(words[:sampling.max_tokens]), "length"
            prompt_tokens = sum(len(m["content"].split()) for m in conv)
            seed = request_seed(list(conv), sampling.seed) if sampling.temperature > 0 else None
            out.append(Completion(text, finish, prompt_tokens, len(text.split()), seed=seed))
        return out

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        if not choices:
            raise ValueError("score needs at least one choice")
        self.score_calls += 1
        if self.scorer is None:
            return np.full((len(conversations), len(choices)), -np.log(len(choices)))
        rows = [np.asarray(self.scorer(conv, choices), dtype=np.float64) for conv in conversations]
        for i, row in enumerate(rows):
            if row.shape != (len(choices),):
                raise ValueError(f"scorer returned shape {row.shape} for conversation {i}; "
                                 f"expected ({len(choices)},)")
        return np.stack(rows)  # [n_conversations, n_choices]
