"""Generation loop: conditions in, a resumable corpus directory out.

A producer turns a batch of conditions (and the attempt number, which changes the sampling
seed) into one result per condition: a :class:`~benevaudit.schema.Dialogue` or a
:class:`Failure`. Failures are logged with their raw text and retried up to ``max_retries``
times; ids that still fail are listed in the dataset card, never silently dropped.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from benevaudit.generation.card import (corpus_statistics, failure_summary, render_readme,
                                        sealed_shards)
from benevaudit.generation.grid import Condition
from benevaudit.generation.spec import LLMGeneratorSpec, ScriptedGeneratorSpec
from benevaudit.generation.writer import (
    COMPLETE, FailureLog, ShardWriter, write_durably, recover, write_manifest,
)
from benevaudit.schema import Dialogue


class Failure(NamedTuple):
    """A condition that produced no usable dialogue on this attempt."""

    reason: str   # "refusal" | "unparseable" | "too_short" | ...
    raw: str      # the model's text, kept for inspection


Producer = Callable[[Sequence[Condition], int], Sequence["Dialogue | Failure"]]


class GenerationSummary(NamedTuple):
    out_dir: Path
    expected: int
    written_now: int
    already_present: int
    gave_up: int
    seconds: float
    card: dict[str, Any]


def _attempt_batch(batch: Sequence[Condition], produce: Producer, writer: ShardWriter,
                   failures: FailureLog, max_retries: int) -> tuple[int, int]:
    """Produce a batch with retries; returns (dialogues written, ids given up)."""
    pending, written = list(batch), 0
    for attempt in range(max_retries + 1):
        results = produce(pending, attempt)
        if len(results) != len(pending):
            raise RuntimeError(f"producer returned {len(results)} results for {len(pending)} "
                               "conditions; it must return one per condition")
        written += writer.write([r for r in results if isinstance(r, Dialogue)])
        failed = [c for c, r in zip(pending, results) if not isinstance(r, Dialogue)]
        for c, r in zip(pending, results):
            if not isinstance(r, Dialogue):
                failures.record(c.id, attempt, r.reason, r.raw, final=attempt == max_retries)
        pending = failed
        if not pending:
            break
    return written, len(pending)


def generate_corpus(conditions: Sequence[Condition], produce: Producer, out_dir: str | Path,
                    params: dict[str, Any], provenance: dict[str, Any], batch_size: int = 256,
                    max_retries: int = 2, shard_size: int = 10_000,
                    progress: bool = True) -> GenerationSummary:
    """Write one dialogue per condition to ``out_dir``, resuming whatever is already there.

    ``params`` identify the generation (a rerun with different params into the same directory
    is refused); ``provenance`` goes into the dataset card as is.
    """
    start = time.perf_counter()
    out = Path(out_dir)
    ids = [c.id for c in conditions]
    if len(set(ids)) != len(ids):
        raise ValueError("conditions contain duplicate ids")
    write_manifest(out, ids, params)
    (out / COMPLETE).unlink(missing_ok=True)
    done = recover(out)
    todo = [c for c, i in zip(conditions, ids) if i not in done]
    failures = FailureLog(out)
    written = gave_up = 0
    bar = tqdm(total=len(ids), initial=len(ids) - len(todo), disable=not progress,
               desc=f"generate {out.name}", unit="dlg", mininterval=2.0)
    with ShardWriter(out, shard_size) as writer:
        for k in range(0, len(todo), batch_size):
            batch = todo[k:k + batch_size]
            w, g = _attempt_batch(batch, produce, writer, failures, max_retries)
            written, gave_up = written + w, gave_up + g
            bar.update(len(batch))
        writer.close()
    bar.close()
    card: dict[str, Any] = {"expected": len(ids), "provenance": provenance, "params": params,
            "statistics": corpus_statistics(sealed_shards(out)), "failures": failure_summary(failures.read()),
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    write_durably(out / "dataset_card.json", json.dumps(card, indent=1, sort_keys=True) + "\n")
    write_durably(out / "README.md", render_readme(card))
    write_durably(out / COMPLETE, json.dumps({"dialogues": card["statistics"]["dialogues"],
                                             "expected": len(ids), "pid": os.getpid()}) + "\n")
    return GenerationSummary(out, len(ids), written, len(done), gave_up,
                             time.perf_counter() - start, card)


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
