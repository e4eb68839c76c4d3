"""``python generate.py``: write a BenevDial-style corpus, resumably, with its dataset card.

Flow: generator config → producer (the scripted phrase banks, or a chat model behind
``benevaudit.llm``) → the attribute grid filtered and limited → ``generate_corpus`` (manifest,
journals sealed into Parquet shards, retries, failures, card, ``_COMPLETE``) → ``metrics.json``.
Rerunning with the same ``out_dir`` and settings resumes: ids already written are skipped.
``dry_run=true`` writes the requests an LLM generator would send to ``requests.jsonl`` instead.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

import benevaudit
from benevaudit.errors import ConfigError
from benevaudit.generation.driver import generate_corpus
from benevaudit.generation.grid import SCRIPTED_GENERATORS, iter_conditions
from benevaudit.generation.producers import build_producer
from benevaudit.pipelines.config import group_choices, output_dir, plain, write_metrics
from benevaudit.pipelines.dry_run import dry_run_of, generate_requests
from benevaudit.pipelines.inputs import check_inputs

log = logging.getLogger(__name__)


def corpus_params(gen: dict[str, Any], cfg: DictConfig, filters: dict[str, Any],
                  limit: int | None) -> dict[str, Any]:
    """The params that define the corpus; a rerun into out_dir must repeat them to resume.

    Settings of the machine rather than the text (batch size, device, threads, memory share,
    request cache) and unset keys of the composed llm block are left out.
    """
    runtime = ("batch_size", "device", "threads", "cache", "gpu_memory_utilization",
               "tensor_parallel_size", "concurrency", "timeout", "max_retries", "backoff")
    llm = {k: v for k, v in (gen.get("llm") or {}).items() if k not in runtime and v is not None}
    return json.loads(json.dumps({
        "generator": {k: v for k, v in gen.items() if k != "llm"} | {"llm": llm},
        "seed": int(cfg.seed), "filters": filters, "limit": limit, "min_turns": int(cfg.min_turns),
    }))


def run(cfg: DictConfig) -> dict[str, float]:
    check_inputs(cfg, "generate")
    run_dir = output_dir(cfg)
    gen = plain(cfg.generator)
    filters = plain(cfg.filters) or {}
    limit = None if cfg.limit is None else int(cfg.limit)
    generators = SCRIPTED_GENERATORS if gen["kind"] == "scripted" else (gen["name"],)
    conditions = list(iter_conditions(filters, limit, generators))
    if not conditions:
        raise ConfigError(f"filters {json.dumps(filters)} select no conditions")
    dry = dry_run_of(cfg)
    if dry is not None:
        return generate_requests(cfg, gen, conditions, dry)
    producer, _ = build_producer(gen, int(cfg.seed), int(cfg.min_turns), cfg.get("llm_cache"))
    out = Path(cfg.out_dir)
    params = corpus_params(gen, cfg, filters, limit)
    provenance = {"generator": gen["name"], "benevaudit_version": benevaudit.__version__,
                  "seed": int(cfg.seed), "config_choices": group_choices(),
                  **producer.provenance()}
    log.info("generating %d dialogues into %s", len(conditions), out)
    try:
        summary = generate_corpus(conditions, producer, out, params, provenance,
                                  batch_size=int(cfg.batch_size), max_retries=int(cfg.max_retries),
                                  shard_size=int(cfg.shard_size), progress=bool(cfg.progress))
    finally:
        model = getattr(producer, "model", None)
        if model is not None:
            model.close()
    stats, fails = summary.card["statistics"], summary.card["failures"]
    metrics = {"generate/expected": summary.expected, "generate/dialogues": stats["dialogues"],
               "generate/written_now": summary.written_now,
               "generate/already_present": summary.already_present,
               "generate/failed_attempts": fails["attempts_failed"],
               "generate/gave_up": summary.gave_up, "generate/mean_turns": stats["mean_turns"],
               "generate/seconds": round(summary.seconds, 3),
               "generate/dialogues_per_s":
                   round(summary.written_now / max(summary.seconds, 1e-9), 1)}
    write_metrics(metrics, run_dir / "metrics.json")
    log.info("corpus: %s (%d dialogues, %d ids given up)", out, stats["dialogues"], summary.gave_up)
    return metrics
