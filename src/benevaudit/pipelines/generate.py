"""``python generate.py``: write a BenevDial-style corpus, resumably, with its dataset card.

Flow: generator config → producer (the scripted phrase banks, or a chat model behind
``benevaudit.llm``) → the attribute grid filtered and limited → ``generate_corpus`` (retries,
failures, card) into ``out_dir`` (``benevaudit.outputs.corpus_shards``: manifest, journals sealed
into Parquet shards, ``_COMPLETE``) → ``metrics.json``.
Rerunning with the same ``out_dir`` and settings resumes: ids already written are skipped.
``dry_run=true`` writes the requests an LLM generator would send to ``requests.jsonl`` instead.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Optional

from omegaconf import DictConfig
from pydantic import model_validator

import benevaudit
from benevaudit.errors import ConfigError
from benevaudit.generation.driver import corpus_params, generate_corpus, summary_metrics
from benevaudit.generation.dry_run import record_generation
from benevaudit.generation.grid import SCRIPTED_GENERATORS, iter_conditions
from benevaudit.generation.producers import build_producer
from benevaudit.generation.spec import GeneratorSpec, check_resumable
from benevaudit.llm.spec import ModelRun
from benevaudit.outputs.corpus_shards import CorpusShards
from benevaudit.pipelines.config import (
    completes, group_choices, output_dir, validated, write_metrics,
)
from benevaudit.specs import NonNegativeInt, PositiveInt

log = logging.getLogger(__name__)


class GenerateRun(ModelRun):
    """generate.py's config: the generator, the grid (``filters``, ``limit``), and how the corpus
    is written into ``out_dir`` (and resumed there)."""

    generator: GeneratorSpec
    limit: Optional[PositiveInt]
    filters: Optional[dict[str, Any]]
    out_dir: str
    max_retries: NonNegativeInt
    batch_size: PositiveInt
    shard_size: PositiveInt
    min_turns: PositiveInt

    @model_validator(mode="after")
    def resumable(self) -> GenerateRun:
        check_resumable(self.out_dir)
        return self


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    run = validated(GenerateRun, cfg)
    run_dir = output_dir(cfg)
    gen, filters = run.generator, run.filters or {}
    generators = SCRIPTED_GENERATORS if gen.kind == "scripted" else (gen.name,)
    conditions = list(iter_conditions(filters, run.limit, generators))
    if not conditions:
        raise ConfigError(f"filters {json.dumps(filters)} select no conditions")
    dry = run.dry()
    if dry is not None:
        metrics = dry.record(run_dir, f"generator {gen.name} on {len(conditions)} conditions",
                             lambda _: record_generation(gen, run.seed, run.min_turns, conditions))
        write_metrics(metrics, run_dir / "metrics.json")
        return metrics
    producer, _ = build_producer(gen, run.seed, run.min_turns, run.llm_cache)
    out = Path(run.out_dir)
    params = corpus_params(gen, run.seed, run.min_turns, filters, run.limit)
    provenance = {"generator": gen.name, "benevaudit_version": benevaudit.__version__,
                  "seed": run.seed, "config_choices": group_choices(), **producer.provenance()}
    log.info("generating %d dialogues into %s", len(conditions), out)
    try:
        summary = generate_corpus(conditions, producer, CorpusShards(out, run.shard_size),
                                  params, provenance, batch_size=run.batch_size,
                                  max_retries=run.max_retries, progress=run.progress)
    finally:
        model = getattr(producer, "model", None)
        if model is not None:
            model.close()
    metrics = summary_metrics(summary)
    write_metrics(metrics, run_dir / "metrics.json")
    log.info("corpus: %s (%d dialogues, %d ids given up)", out,
             summary.card["statistics"]["dialogues"], summary.gave_up)
    return metrics
