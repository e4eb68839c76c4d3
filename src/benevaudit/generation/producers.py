"""A ``generator`` block turned into a producer: the scripted phrase banks, or a chat model
behind :mod:`benevaudit.llm` writing whole dialogues or one message a call.

Takes the block's spec (``generation.spec.GeneratorSpec``), checked when the run began.
"""

from __future__ import annotations

from typing import Union

from benevaudit.generation.grid import SCRIPTED_GENERATORS
from benevaudit.generation.llm_generator import LLMProducer
from benevaudit.generation.scripted import ScriptedProducer
from benevaudit.generation.self_chat import SelfChatProducer
from benevaudit.generation.spec import LLMGeneratorSpec, ScriptedGeneratorSpec
from benevaudit.llm import build_from_block

Producer = Union[ScriptedProducer, LLMProducer]


def build_producer(gen: ScriptedGeneratorSpec | LLMGeneratorSpec, seed: int, min_turns: int,
                   llm_cache: str | None) -> tuple[Producer, tuple[str, ...]]:
    """The producer of a generator block and the generator names it writes."""
    if isinstance(gen, ScriptedGeneratorSpec):
        scripted = ScriptedProducer(seed=seed, signal=gen.signal,
                                    planted_cues=[c.cue() for c in gen.planted_cues])
        return scripted, SCRIPTED_GENERATORS
    sampling = gen.sampling.sampling()
    model = build_from_block(gen.llm, cache=llm_cache)
    producer_class = SelfChatProducer if gen.mode == "self_chat" else LLMProducer
    producer = producer_class(model, sampling, seed=seed, min_turns=min_turns,
                              system_in_user=gen.system_in_user, exchanges=gen.exchanges)
    return producer, (gen.name,)
