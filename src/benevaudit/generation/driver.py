"""Generation loop: conditions in, a resumable corpus out (into a
:class:`~benevaudit.generation.sink.CorpusSink` the caller builds).

A producer turns a batch of conditions (and the attempt number, which changes the sampling
seed) into one result per condition: a :class:`~benevaudit.schema.Dialogue` or a
:class:`Failure`. Failures are kept with their raw text and retried up to ``max_retries``
times; ids that still fail are listed in the dataset card, never silently dropped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from benevaudit.generation.card import corpus_statistics, failure_summary, render_readme
from benevaudit.generation.grid import Condition
from benevaudit.generation.sink import CorpusSink
from benevaudit.generation.spec import LLMGeneratorSpec, ScriptedGeneratorSpec
from benevaudit.schema import Dialogue


class Failure(NamedTuple):
    """A condition that produced no usable dialogue on this attempt."""

    reason: str   # "refusal" | "unparseable" | "too_short" | ...
    raw: str      # the model's text, kept for inspection


Producer = Callable[[Sequence[Condition], int], Sequence["Dialogue | Failure"]]


class GenerationSummary(NamedTuple):
    expected: int
    written_now: int
    already_present: int
    gave_up: int
    seconds: float
    card: dict[str, Any]


def _attempt_batch(batch: Sequence[Condition], produce: Producer, sink: CorpusSink,
                   max_retries: int) -> tuple[int, int]:
    """Produce a batch with retries; returns (dialogues written, ids given up)."""
    pending, written = list(batch), 0
    for attempt in range(max_retries + 1):
        results = produce(pending, attempt)
        if len(results) != len(pending):
            raise RuntimeError(f"producer returned {len(results)} results for {len(pending)} "
                               "conditions; it must return one per condition")
        written += sink.write([r for r in results if isinstance(r, Dialogue)])
        failed = [c for c, r in zip(pending, results) if not isinstance(r, Dialogue)]
        for c, r in zip(pending, results):
            if not isinstance(r, Dialogue):
                sink.record(c.id, attempt, r.reason, r.raw, final=attempt == max_retries)
        pending = failed
        if not pending:
            break
    return written, len(pending)


def generate_corpus(conditions: Sequence[Condition], produce: Producer, sink: CorpusSink,
                    params: dict[str, Any], provenance: dict[str, Any], batch_size: int = 256,
                    max_retries: int = 2, progress: bool = True) -> GenerationSummary:
    """Put one dialogue per condition into ``sink``, resuming whatever it already holds.

    ``params`` identify the generation (a rerun with different params into the same corpus
    is refused); ``provenance`` goes into the dataset card as is.
    """
    start = time.perf_counter()
    ids = [c.id for c in conditions]
    if len(set(ids)) != len(ids):
        raise ValueError("conditions contain duplicate ids")
    done = sink.start(ids, params)
    todo = [c for c, i in zip(conditions, ids) if i not in done]
    written = gave_up = 0
    bar = tqdm(total=len(ids), initial=len(ids) - len(todo), disable=not progress,
               desc=f"generate {sink.name}", unit="dlg", mininterval=2.0)
    try:
        for k in range(0, len(todo), batch_size):
            batch = todo[k:k + batch_size]
            w, g = _attempt_batch(batch, produce, sink, max_retries)
            written, gave_up = written + w, gave_up + g
            bar.update(len(batch))
        sink.seal()
    finally:
        sink.release()
    bar.close()
    card = dataset_card(len(ids), params, provenance, sink)
    sink.finish(card, render_readme(card))
    return GenerationSummary(len(ids), written, len(done), gave_up,
                             time.perf_counter() - start, card)


def dataset_card(expected: int, params: dict[str, Any], provenance: dict[str, Any],
                 sink: CorpusSink) -> dict[str, Any]:
    """``dataset_card.json``: what was asked for, how, and what the corpus holds and lost."""
    return {"expected": expected, "provenance": provenance, "params": params,
            "statistics": corpus_statistics(sink.table()),
            "failures": failure_summary(sink.failures()),
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def corpus_params(gen: ScriptedGeneratorSpec | LLMGeneratorSpec, seed: int, min_turns: int,
                  filters: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """The params that define the corpus; a rerun into out_dir must repeat them to resume.

    The generator block as written, but for settings of the machine rather than the text
    (batch size, device, threads, memory share, request cache) and null keys of its llm block.
    """
    runtime = {"batch_size", "device", "threads", "cache", "gpu_memory_utilization",
               "tensor_parallel_size", "concurrency", "timeout", "max_retries"}
    written = gen.model_dump(exclude_unset=True, exclude={"llm"})
    llm = (gen.llm.model_dump(exclude_unset=True, exclude_none=True, exclude=runtime)
           if isinstance(gen, LLMGeneratorSpec) else {})
    return json.loads(json.dumps({
        "generator": written | {"llm": llm},
        "seed": seed, "filters": filters, "limit": limit, "min_turns": min_turns,
    }))


def summary_metrics(summary: GenerationSummary) -> dict[str, float]:
    """The ``generate/*`` figures of a generation run's ``metrics.json``."""
    stats, fails = summary.card["statistics"], summary.card["failures"]
    return {"generate/expected": summary.expected, "generate/dialogues": stats["dialogues"],
            "generate/written_now": summary.written_now,
            "generate/already_present": summary.already_present,
            "generate/failed_attempts": fails["attempts_failed"],
            "generate/gave_up": summary.gave_up, "generate/mean_turns": stats["mean_turns"],
            "generate/seconds": round(summary.seconds, 3),
            "generate/dialogues_per_s":
                round(summary.written_now / max(summary.seconds, 1e-9), 1)}
