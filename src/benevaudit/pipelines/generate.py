"""``python generate.py``: write a BenevDial-style corpus, resumably, with its dataset card.

Flow: generator config → producer (the scripted phrase banks, or a chat model behind
``benevaudit.llm``) → the attribute grid filtered and limited → ``generate_corpus`` (manifest,
journals sealed into Parquet shards, retries, failures, card, ``_COMPLETE``) → ``metrics.json``.
Rerunning with the same ``out_dir`` and settings resumes: ids already written are skipped.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

import benevaudit
from benevaudit.errors import ConfigError
from benevaudit.pipelines.config import group_choices, output_dir, plain, write_metrics

log = logging.getLogger(__name__)
KINDS = ("scripted", "llm")
MODES = ("whole", "self_chat")  # one prompt per dialogue (the study's) | one call per message


def build_producer(gen: dict[str, Any], seed: int, min_turns: int,
                   llm_cache: str | None) -> tuple[Any, tuple[str, ...]]:
    """The producer for a generator config and the generator names it writes."""
    kind = gen.get("kind")
    if kind == "scripted":
        from benevaudit.generation.grid import SCRIPTED_GENERATORS
        from benevaudit.generation.scripted import ScriptedProducer

        producer = ScriptedProducer(seed=seed, signal=float(gen.get("signal", 0.8)),
                                    planted_cues=gen.get("planted_cues") or ())
        return producer, SCRIPTED_GENERATORS
    if kind == "llm":
        from benevaudit.generation.llm_generator import LLMProducer
        from benevaudit.llm import Sampling, build_chat_model

        llm = dict(gen["llm"])
        backend = llm.pop("backend")
        sampling = gen.get("sampling") or {}
        sampling = Sampling(**{**sampling, "stop": tuple(sampling.get("stop") or ())})
        mode = gen.get("mode", "whole")
        if mode not in MODES:
            raise ConfigError(f"generator.mode must be one of {list(MODES)}, got {mode!r}")
        model = build_chat_model(backend, cache=llm_cache, **llm)
        producer_class = LLMProducer
        if mode == "self_chat":
            from benevaudit.generation.self_chat import SelfChatProducer

            producer_class = SelfChatProducer
        producer = producer_class(model, sampling, seed=seed, min_turns=min_turns,
                                  system_in_user=bool(gen.get("system_in_user", False)),
                                  exchanges=gen.get("exchanges"))
        return producer, (gen["name"],)
    raise ConfigError(f"generator.kind must be one of {list(KINDS)}, got {kind!r}")


def run(cfg: DictConfig) -> dict[str, float]:
    from benevaudit.generation.driver import generate_corpus
    from benevaudit.generation.grid import iter_conditions

    run_dir = output_dir(cfg)
    gen = plain(cfg.generator)
    filters = plain(cfg.filters) or {}
    limit = None if cfg.limit is None else int(cfg.limit)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of dialogues or null, got {limit}")
    producer, generators = build_producer(gen, int(cfg.seed), int(cfg.min_turns),
                                          cfg.get("llm_cache"))
    conditions = list(iter_conditions(filters, limit, generators))
    if not conditions:
        raise ConfigError(f"filters {json.dumps(filters)} select no conditions")
    out = Path(cfg.out_dir)
    # the params that define the corpus; a rerun into out_dir must repeat them to resume
    params = json.loads(json.dumps({
        "generator": {k: v for k, v in gen.items() if k != "llm"} | {
            "llm": {k: v for k, v in (gen.get("llm") or {}).items()
                    if k not in ("batch_size", "device")}},
        "seed": int(cfg.seed), "filters": filters, "limit": limit, "min_turns": int(cfg.min_turns),
    }))
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
