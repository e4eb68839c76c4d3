"""Self-chat generation: the model writes one message at a time, playing each side in turn.

Whole-dialogue prompting (``llm_generator.LLMProducer``, the study's method) needs a model that
follows a transcript format; small models often do not. Self-chat needs none: each call asks
for the next message only, as the user (with the user's demographics and concern) or as the
agent (with its role, persona and the class instruction). A batch advances message by message,
so every call is batched across the batch's dialogues.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from benevaudit.generation.driver import Failure
from benevaudit.generation.grid import Condition
from benevaudit.generation.llm_generator import LLMProducer, attempt_seed
from benevaudit.generation.parse import parse_message
from benevaudit.generation.prompts import requested_turns, self_chat_prompt
from benevaudit.generation.scripted import dialogue_seed
from benevaudit.schema import Dialogue, Turn


class SelfChatProducer(LLMProducer):
    """A producer that builds each dialogue message by message (``mode: self_chat``)."""

    def provenance(self) -> dict[str, Any]:
        return {**super().provenance(), "mode": "self_chat"}

    def __call__(self, conditions: Sequence[Condition], attempt: int) -> list[Dialogue | Failure]:
        n_turns = [requested_turns(random.Random(dialogue_seed(c.id, self.seed)), self.exchanges)
                   for c in conditions]
        turns: list[list[Turn]] = [[] for _ in conditions]
        failed: dict[int, Failure] = {}
        tokens = [0] * len(conditions)
        base = attempt_seed(self.sampling.seed, attempt)
        for step in range(max(n_turns)):
            speaker = "user" if step % 2 == 0 else "agent"
            active = [i for i, n in enumerate(n_turns) if step < n and i not in failed]
            if not active:
                break
            prompts = [self_chat_prompt(conditions[i], turns[i], speaker, self.system_in_user)
                       for i in active]
            replies = self.model.chat(prompts, replace(self.sampling, seed=base + step))
            for i, reply in zip(active, replies, strict=True):
                msg = parse_message(reply.text, truncated=reply.finish_reason == "length")
                tokens[i] += reply.completion_tokens
                if msg.reason is not None:
                    failed[i] = Failure(msg.reason, f"[{speaker} message {step}] {reply.text}")
                else:
                    turns[i].append(Turn(speaker, msg.text))
        out: list[Dialogue | Failure] = []
        for i, c in enumerate(conditions):
            if i in failed:
                out.append(failed[i])
                continue
            meta = {"source": "llm", "mode": "self_chat", "attempt": attempt,
                    "requested_turns": n_turns[i], "completion_tokens": tokens[i],
                    "sampling_seed": base}
            out.append(Dialogue(id=c.id, label=c.label, role=c.role, generator=c.generator,
                                user=c.user_dict, agent=c.agent_dict, turns=tuple(turns[i]),
                                meta=meta))
        return out
