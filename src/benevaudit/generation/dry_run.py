"""A generation's requests in a dry run: one per dialogue (whole), or one per message
(self-chat, each after the first depending on the one before). Nothing is written to out_dir."""

from __future__ import annotations

import logging
from benevaudit.generation.grid import Condition
from benevaudit.generation.producers import build_producer
from benevaudit.generation.spec import LLMGeneratorSpec, ScriptedGeneratorSpec
from benevaudit.llm.dry_run import scope

log = logging.getLogger(__name__)


def record_generation(gen: ScriptedGeneratorSpec | LLMGeneratorSpec, seed: int, min_turns: int,
                      conditions: list[Condition]) -> None:
    """Send attempt 0 of every condition to the generator's (recording) model; a retry would
    repeat a request with a new seed."""
    producer, _ = build_producer(gen, seed, min_turns, None)
    if gen.kind != "llm":
        log.info("generator=%s writes from phrase banks: no model requests", gen.name)
        return
    for c in conditions:
        with scope(id=c.id):
            producer([c], 0)
