"""``python detect.py``: a detector or LLM judge over an evaluation set (the study's Table 3).

``detector=<name>`` picks a config of ``conf/detector/``: a sequence classifier, a generative
guard, a prompted judge (``judges`` lists its models), the audit's own classifier
(``detector=finetuned ckpt=…``) or predictions made elsewhere (``detector=external
predictions.path=…``). Every run writes ``predictions.parquet`` (decisions and every unit's
score), ``metrics.json`` (``binary/*``, ``trigger/*``, ``detect/*``, ``test/*`` where a three-way
prediction exists), ``confusion_matrix.png``, and the bootstrap stability table and figure.
``flips.with=<run> flips.without=<run>`` instead compares two judge runs (Figure 4).
``dry_run=true`` writes every request the run would send to ``requests.jsonl`` and loads no model.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from benevaudit.audit import checkpoints
from benevaudit.detectors import (
    Checkpoint,
    Detector,
    build_detector,
    evaluation_set,
    reads_corpus,
)
from benevaudit.encoders.models import set_offline_defaults
from benevaudit.errors import ConfigError
from benevaudit.generation.embedded import load_dialogues
from benevaudit.pipelines.config import output_dir, plain, run_logger, write_metrics
from benevaudit.pipelines.dry_run import detect_requests, dry_run_of
from benevaudit.pipelines.inputs import check_inputs
from benevaudit.report.detect_outputs import (
    category_metrics,
    per_judge_metrics,
    score_frame,
    write_bootstrap,
    write_confusion,
    write_flips,
    write_predictions,
)
from benevaudit.report.figures.detection import trigger_png
from benevaudit.report.tracking import finish_logger
from benevaudit.schema import Dialogue

log = logging.getLogger(__name__)


def build(cfg: DictConfig, spec: dict[str, Any]) -> Detector:
    """The detector of ``cfg.detector`` with what its kind reads: the judges group, the trained
    classifier (``ckpt``) or the predictions file."""
    ckpt = cfg.get("ckpt")
    checkpoint = Checkpoint(str(ckpt), checkpoints.locate, checkpoints.load_frozen) if ckpt else None
    judges = list((plain(cfg.get("judges")) or {}).get("models") or [])
    return build_detector(spec, judges, cache=cfg.get("llm_cache"), checkpoint=checkpoint,
                          predictions=plain(cfg.get("predictions")), seed=int(cfg.seed))


def evaluation_dialogues(cfg: DictConfig) -> tuple[list[Dialogue], int]:
    """(the evaluation set, the corpus size)."""
    dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
    ev = plain(cfg.eval)
    chosen = evaluation_set(dialogues, float(ev["fraction"]), ev.get("limit"), int(ev["seed"]))
    log.info("evaluation set: %d of %d dialogues", len(chosen), len(dialogues))
    return chosen, len(dialogues)


def detect(cfg: DictConfig, spec: dict[str, Any]) -> tuple[pd.DataFrame, int | None, float]:
    """(predictions frame, corpus size, seconds of detection, the model's loading included).
    The corpus is read before any model is loaded, so a bad one fails first."""
    corpus = reads_corpus(spec)
    chosen, corpus_size = evaluation_dialogues(cfg) if corpus else ([], None)
    start = time.perf_counter()
    detector = build(cfg, spec)
    try:
        frame = detector.predictions(chosen, progress=bool(cfg.get("progress", True)))
    finally:
        detector.close()
    # a detector that reads its decisions from a file detected nothing here
    return frame, corpus_size, time.perf_counter() - start if corpus else 0.0


def run_flips(cfg: DictConfig) -> dict[str, float]:
    out = output_dir(cfg)
    flips = plain(cfg.flips)
    if not flips.get("with") or not flips.get("without"):
        raise ConfigError("flips needs both flips.with=<judge run with demographics> and "
                          "flips.without=<the same judge without>")
    metrics = write_flips(str(flips["with"]), str(flips["without"]), out)
    write_metrics(metrics, out / "metrics.json")
    log.info("flips: N->BB %s, BB->N %s  run dir: %s",
             {k: metrics.get(f"flips/N_to_BB/{k}") for k in ("wrong", "corrective")},
             {k: metrics.get(f"flips/BB_to_N/{k}") for k in ("wrong", "corrective")}, out)
    return metrics


def run(cfg: DictConfig) -> dict[str, float]:
    set_offline_defaults()
    check_inputs(cfg, "detect")
    flips = plain(cfg.get("flips")) or {}
    if flips.get("with") or flips.get("without"):
        return run_flips(cfg)
    dry = dry_run_of(cfg)
    if dry is not None:
        return detect_requests(cfg, dry)
    out = output_dir(cfg)
    spec = plain(cfg.detector)
    logger = run_logger(cfg, out, f"detect-{spec['name']}-{out.name}")
    try:
        frame, corpus_size, seconds = detect(cfg, spec)
        write_predictions(frame, out / "predictions.parquet")
        metrics = score_frame(frame)
        metrics.update(per_judge_metrics(frame))
        metrics.update(category_metrics(frame))
        metrics.update({"detect/seconds": seconds,
                        "detect/seconds_per_dialogue": seconds / max(len(frame), 1)})
        title = f"{spec['name']} · n={len(frame)}"
        write_confusion(frame, out / "confusion_matrix.png", title)
        trigger_png(metrics, out / "trigger_rates.png", title)
        boot = plain(cfg.bootstrap)
        if boot.get("enabled"):
            metrics.update(write_bootstrap(frame, boot, corpus_size, out, title, int(cfg.seed)))
        if logger:
            logger.log_metrics({k: v for k, v in metrics.items() if v == v})
        write_metrics(metrics, out / "metrics.json")
        log.info("%s: TR_N=%.3f TR_OB=%.3f TR_BB=%.3f delta=%.3f invalid=%.3f (%.1f s)  run dir: %s",
                 spec["name"], *(metrics.get(f"trigger/{k}", float("nan"))
                                 for k in ("TR_N", "TR_OB", "TR_BB", "delta_OB_BB")),
                 metrics.get("detect/invalid_rate", float("nan")), seconds, out)
        return metrics
    finally:
        finish_logger(logger)
