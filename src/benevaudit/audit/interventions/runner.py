"""Running a sequence of interventions over a corpus table, batch by batch.

Steps run in the order given (``freq_norm+shuffle`` is P→F→SH). The table is cut into record
batches of ``batch_size`` dialogues, processed by a thread pool (Arrow kernels and numpy sorts
release the GIL). A step that needs corpus statistics (F, S) splits the pipeline: the steps
before it run over every batch once, it counts over their output, and the rest continues
from that output, so nothing is computed twice and memory stays at the input, one
intermediate and the output.
"""

from __future__ import annotations

import operator
import os
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions.base import Edit, Intervention
from benevaudit.audit.interventions.registry import build
from benevaudit.audit.interventions.seeding import step_seed
from benevaudit.audit.interventions.turns import check_schema
from benevaudit.audit.lexicon import Lexicon
from benevaudit.schema import CLASSES

PREFIX = "intervention/"


def run_interventions(table: pa.Table, steps: Sequence[Intervention | tuple[str, dict]],
                      lexicon: Lexicon | None, seed: int, batch_size: int = 4096,
                      workers: int | None = None) -> tuple[pa.Table, dict[str, float]]:
    """Apply ``steps`` to every dialogue of ``table``; return the edited table and the
    ``intervention/*`` figures for metrics.json (counts, per-turn rates, fractions).
    A step is a built intervention (a run's, built once) or (name, params), built here with
    ``lexicon``. ``workers`` threads (default: the CPU count, at most 8) never change the
    result."""
    check_schema(table.schema)
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    built = [s if isinstance(s, Intervention) else build(*s, lexicon) for s in steps]
    seeds = [step_seed(seed, i, step.name) for i, step in enumerate(built)]
    states: list[Any] = [None] * len(built)
    originals = table.to_batches(max_chunksize=batch_size)
    counts: Counter[str] = Counter()
    current, done = originals, 0
    workers = workers or min(os.cpu_count() or 1, 8)
    with ThreadPoolExecutor(workers) as pool:
        each = pool.map if workers > 1 else map                      # 1: inline, for profiling
        for i, step in enumerate(built):
            if not step.needs_corpus:
                continue
            current = _stage(each, current, built[done:i], seeds[done:i], states[done:i], counts)
            done = i
            parts = list(each(step.measure, current or [_empty_batch(table.schema)]))
            states[i] = step.finish(tuple(reduce(operator.add, (p[j] for p in parts))
                                          for j in range(len(parts[0]))))
        current = _stage(each, current, built[done:], seeds[done:], states[done:], counts)
        for c in each(_turn_counts, originals, current):
            counts.update(c)
    return pa.Table.from_batches(current, schema=table.schema), summarise(counts)


def _stage(each: Callable, batches: list[pa.RecordBatch], steps: list[Intervention],
           seeds: list[int], states: list[Any], counts: Counter) -> list[pa.RecordBatch]:
    """Run ``steps`` over every batch; add their counts to ``counts``."""
    if not steps:
        return batches

    def one(batch: pa.RecordBatch) -> Edit:
        total: Counter[str] = Counter()
        for step, s, state in zip(steps, seeds, states):
            batch, c = step.apply(batch, s, state)
            total.update(c)
        return Edit(batch, total)

    out = []
    for batch, c in each(one, batches):
        out.append(batch)
        counts.update(c)
    return out


def _empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


def _turn_counts(before: pa.RecordBatch, after: pa.RecordBatch) -> Counter:
    old, new = before.column("turns").flatten(), after.column("turns").flatten()
    agent = pc.fill_null(pc.equal(old.field("speaker"), "agent"), False)
    changed = pc.fill_null(pc.not_equal(old.field("text"), new.field("text")), False)
    return Counter(turns=len(old), agent_turns=pc.sum(agent).as_py() or 0,
                   changed_turns=pc.sum(changed).as_py() or 0,
                   changed_agent_turns=pc.sum(pc.and_(changed, agent)).as_py() or 0)


def summarise(counts: Counter) -> dict[str, float]:
    """Counts plus the rates a report needs; every name starts with ``intervention/``."""
    turns, agent = max(counts["turns"], 1), max(counts["agent_turns"], 1)
    out = {PREFIX + k: float(v) for k, v in sorted(counts.items())}
    for key in ("turns", "agent_turns", "masked_words", "inserted_words", "punct_replaced",
                "changed_turns", "changed_agent_turns", "shuffled_turns"):
        out.setdefault(PREFIX + key, 0.0)
    out[PREFIX + "changed_turn_rate"] = counts["changed_turns"] / turns
    out[PREFIX + "changed_agent_turn_rate"] = counts["changed_agent_turns"] / agent
    out[PREFIX + "masked_words_per_agent_turn"] = counts["masked_words"] / agent
    out[PREFIX + "inserted_words_per_agent_turn"] = counts["inserted_words"] / agent
    out[PREFIX + "punct_replaced_per_turn"] = counts["punct_replaced"] / turns
    if counts["agent_words"]:
        out[PREFIX + "masked_word_rate"] = counts["masked_words"] / counts["agent_words"]
    for c in CLASSES:
        if counts[f"agent_turns_{c}"]:
            out[PREFIX + f"inserted_words_per_agent_turn_{c}"] = (
                counts[f"inserted_words_{c}"] / counts[f"agent_turns_{c}"])
    return out
