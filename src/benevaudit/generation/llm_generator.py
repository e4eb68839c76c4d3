"""LLM generators: prompt a chat model for whole dialogues and parse its replies.

The producer sends one request per condition (batched through ``ChatModel.chat``), parses each
reply, and returns a :class:`~benevaudit.schema.Dialogue` or a
:class:`~benevaudit.generation.driver.Failure` with the raw text. A retry changes the sampling
seed, so a refusal or a malformed reply is not simply served again from the request cache.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from benevaudit.generation.driver import Failure
from benevaudit.generation.grid import Condition
from benevaudit.generation.parse import parse_dialogue
from benevaudit.generation.prompts import build_prompt, requested_turns
from benevaudit.generation.scripted import dialogue_seed
from benevaudit.llm import ChatModel, Sampling
from benevaudit.schema import Dialogue


def attempt_seed(seed: int, attempt: int) -> int:
    """The sampling seed of an attempt: stable, different for every retry, fits 31 bits."""
    digest = hashlib.sha256(f"{seed}:attempt:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class LLMProducer:
    """A producer over any ``ChatModel``; conditions name the corpus's ``generator`` field."""

    def __init__(self, model: ChatModel, sampling: Sampling, seed: int, min_turns: int,
                 system_in_user: bool, exchanges: Sequence[int] | None) -> None:
        self.model, self.sampling, self.seed, self.min_turns = model, sampling, seed, min_turns
        self.system_in_user = system_in_user
        self.exchanges = tuple(exchanges) if exchanges else None

    def provenance(self) -> dict[str, Any]:
        s = self.sampling
        return {"backend": getattr(self.model, "name", type(self.model).__name__),
                "model": getattr(self.model, "model_id", None),
                "model_revision": getattr(self.model, "revision", None),
                "chat_template_sha256": getattr(self.model, "template_hash", None),
                "sampling": {"temperature": s.temperature, "top_p": s.top_p,
                             "max_tokens": s.max_tokens, "seed": s.seed, "stop": list(s.stop)},
                "min_turns": self.min_turns, "system_in_user": self.system_in_user,
                "mode": "whole", "exchanges": list(self.exchanges) if self.exchanges else None}

    def __call__(self, conditions: Sequence[Condition], attempt: int) -> list[Dialogue | Failure]:
        n_turns = [requested_turns(random.Random(dialogue_seed(c.id, self.seed)), self.exchanges)
                   for c in conditions]
        prompts = [build_prompt(c, n, self.system_in_user) for c, n in zip(conditions, n_turns)]
        sampling = Sampling(temperature=self.sampling.temperature, top_p=self.sampling.top_p,
                            max_tokens=self.sampling.max_tokens, stop=self.sampling.stop,
                            seed=attempt_seed(self.sampling.seed, attempt))
        completions = self.model.chat(prompts, sampling)
        out: list[Dialogue | Failure] = []
        for c, n, comp in zip(conditions, n_turns, completions, strict=True):
            parsed = parse_dialogue(comp.text, self.min_turns,
                                    truncated=comp.finish_reason == "length")
            if parsed.reason is not None:
                out.append(Failure(parsed.reason, comp.text))
                continue
            meta = {"source": "llm", "attempt": attempt, "requested_turns": n,
                    "finish_reason": comp.finish_reason, "prompt_tokens": comp.prompt_tokens,
                    "completion_tokens": comp.completion_tokens, "sampling_seed": sampling.seed}
            out.append(Dialogue(id=c.id, label=c.label, role=c.role, generator=c.generator,
                                user=c.user_dict, agent=c.agent_dict, turns=parsed.turns,
                                meta=meta))
        return out
