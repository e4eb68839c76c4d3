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

from omegaconf import DictConfig

import benevaudit
from benevaudit.errors import ConfigError
from benevaudit.generation.driver import corpus_params, generate_corpus, summary_metrics
from benevaudit.generation.grid import SCRIPTED_GENERATORS, iter_conditions
from benevaudit.generation.producers import build_producer
from benevaudit.pipelines.config import group_choices, output_dir, plain, write_metrics
from benevaudit.pipelines.dry_run import dry_run_of, generate_requests
from benevaudit.pipelines.inputs import check_inputs

log = logging.getLogger(__name__)


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
    params = corpus_params(gen, int(cfg.seed), int(cfg.min_turns), filters, limit)
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
    metrics = summary_metrics(summary)
    write_metrics(metrics, run_dir / "metrics.json")
    log.info("corpus: %s (%d dialogues, %d ids given up)", out,
             summary.card["statistics"]["dialogues"], summary.gave_up)
    return metrics
