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
        from benevaudit.llm import Sampling, build_from_block

        sampling = gen.get("sampling") or {}
        sampling = Sampling(**{**sampling, "stop": tuple(sampling.get("stop") or ())})
        mode = gen.get("mode", "whole")
        if mode not in MODES:
            raise ConfigError(f"generator.mode must be one of {list(MODES)}, got {mode!r}")
        # the block composes the llm/ group; keys its backend does not take are dropped
        model = build_from_block(gen["llm"], cache=llm_cache)
        producer_class = LLMProducer
        if mode == "self_chat":
            from benevaudit.generation.self_chat import SelfChatProducer

            producer_class = SelfChatProducer
        producer = producer_class(model, sampling, seed=seed, min_turns=min_turns,
                                  system_in_user=bool(gen.get("system_in_user", False)),
                                  exchanges=gen.get("exchanges"))
        return producer, (gen["name"],)
    raise ConfigError(f"generator.kind must be one of {list(KINDS)}, got {kind!r}")


def check_llm_block(block: dict[str, Any], key: str) -> None:
    """Backend name, a local model directory or an offline hub cache entry, a template file."""
    import os

    from benevaudit.llm import BACKENDS

    if block.get("backend") not in BACKENDS:
        raise ConfigError(f"{key}.backend={block.get('backend')!r}: expected one of "
                          f"{sorted(BACKENDS)}")
    model = str(block.get("model") or "")
    local = model.startswith(("/", "./", "../", "~"))
    if local and not Path(model).expanduser().is_dir():
        raise ConfigError(f"{key}.model={model}: no such directory (expected a model directory "
                          "with config.json, weights and tokenizer files)")
    if (block["backend"] == "hf" and not local and "/" in model
            and os.environ.get("HF_HUB_OFFLINE") == "1"):
        from huggingface_hub import try_to_load_from_cache

        if not isinstance(try_to_load_from_cache(model, "config.json"), str):
            raise ConfigError(f"{key}.model={model}: not in the Hugging Face cache, and "
                              "HF_HUB_OFFLINE=1 (expected a cached hub id, a local directory, "
                              "or embedded:smollm2)")
    template = block.get("chat_template")
    if template and "{" not in str(template) and not Path(str(template)).is_file():
        raise ConfigError(f"{key}.chat_template={template}: no such template file (expected "
                          "a .jinja file or an inline Jinja string)")


def check_generator(cfg: DictConfig) -> None:
    """Everything about ``generator=`` that can be checked before a model is loaded."""
    from benevaudit.pipelines.inputs import check_planted_cues

    gen = plain(cfg.generator)
    if gen.get("kind") not in KINDS:
        raise ConfigError(f"generator.kind must be one of {list(KINDS)}, got {gen.get('kind')!r}")
    check_planted_cues(gen.get("planted_cues"), "generator.planted_cues")
    if gen["kind"] != "llm":
        return
    if gen.get("mode", "whole") not in MODES:
        raise ConfigError(f"generator.mode must be one of {list(MODES)}, got {gen.get('mode')!r}")
    exchanges = gen.get("exchanges")
    if exchanges is not None and not (
            isinstance(exchanges, list) and exchanges
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1
                    for n in exchanges)):
        raise ConfigError(f"generator.exchanges={exchanges!r}: expected null or a list of "
                          "positive integers (user-agent exchanges per dialogue)")
    check_llm_block(gen.get("llm") or {}, "generator.llm")


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
    from benevaudit.generation.driver import generate_corpus
    from benevaudit.generation.grid import SCRIPTED_GENERATORS, iter_conditions
    from benevaudit.pipelines.inputs import check_inputs

    check_inputs(cfg, "generate")
    run_dir = output_dir(cfg)
    gen = plain(cfg.generator)
    filters = plain(cfg.filters) or {}
    limit = None if cfg.limit is None else int(cfg.limit)
    generators = SCRIPTED_GENERATORS if gen["kind"] == "scripted" else (gen["name"],)
    conditions = list(iter_conditions(filters, limit, generators))
    if not conditions:
        raise ConfigError(f"filters {json.dumps(filters)} select no conditions")
    from benevaudit.pipelines.dry_run import dry_run_of, generate_requests

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
