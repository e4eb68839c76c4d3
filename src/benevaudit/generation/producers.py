"""A ``generator`` config block turned into a producer: the scripted phrase banks, or a chat
model behind :mod:`benevaudit.llm` writing whole dialogues or one message a call.

Takes plain values (the pipeline resolves the config); ``generation.spec.GeneratorSpec`` checks
the block first, and every error names the key.
"""

from __future__ import annotations

from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.generation.grid import SCRIPTED_GENERATORS
from benevaudit.generation.llm_generator import LLMProducer
from benevaudit.generation.scripted import PlantedCue, ScriptedProducer
from benevaudit.generation.self_chat import SelfChatProducer
from benevaudit.llm import Sampling, build_from_block

KINDS = ("scripted", "llm")
MODES = ("whole", "self_chat")  # one prompt per dialogue (the study's) | one call per message


def build_producer(gen: dict[str, Any], seed: int, min_turns: int,
                   llm_cache: str | None) -> tuple[Any, tuple[str, ...]]:
    """The producer for a generator config and the generator names it writes."""
    kind = gen["kind"]
    if kind == "scripted":
        producer = ScriptedProducer(seed=seed, signal=float(gen["signal"]),
                                    planted_cues=gen["planted_cues"] or ())
        return producer, SCRIPTED_GENERATORS
    if kind == "llm":
        sampling = gen["sampling"]
        sampling = Sampling(**{**sampling, "stop": tuple(sampling.get("stop") or ())})
        mode = gen["mode"]
        if mode not in MODES:
            raise ConfigError(f"generator.mode must be one of {list(MODES)}, got {mode!r}")
        # the block composes the llm/ group; keys its backend does not take are dropped
        model = build_from_block(gen["llm"], cache=llm_cache)
        producer_class: type[LLMProducer] = LLMProducer
        if mode == "self_chat":
            producer_class = SelfChatProducer
        producer = producer_class(model, sampling, seed=seed, min_turns=min_turns,
                                  system_in_user=bool(gen["system_in_user"]),
                                  exchanges=gen["exchanges"])
        return producer, (gen["name"],)
    raise ConfigError(f"generator.kind must be one of {list(KINDS)}, got {kind!r}")


def check_planted_cues(cues: Any, key: str) -> None:
    """``[{token, label, rate}, ...]``: each cue is built, so its checks run with the key named."""
    for i, cue in enumerate(cues or []):
        if not isinstance(cue, dict) or set(cue) != {"token", "label", "rate"}:
            raise ConfigError(f"{key}[{i}]={cue!r}: expected "
                              "{token: <word>, label: N|OB|BB, rate: <0..1>}")
        try:
            PlantedCue(**cue)
        except ConfigError as e:
            raise ConfigError(f"{key}[{i}]: {e}") from None
