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

from omegaconf import DictConfig

from benevaudit.pipelines.config import group_choices, output_dir, plain, write_metrics
from benevaudit.pipelines.detect_outputs import (
    category_metrics,
    per_judge_metrics,
    predictions_frame,
    score_frame,
    write_bootstrap,
    write_confusion,
    write_flips,
    write_predictions,
)

log = logging.getLogger(__name__)


def detect_dialogues(cfg: DictConfig, spec: dict[str, Any]) -> tuple[Any, int, float]:
    """(predictions frame, corpus size, seconds of detection) for a corpus-reading detector."""
    from benevaudit.detectors import build_detector
    from benevaudit.pipelines.data import load_dialogues
    from benevaudit.pipelines.detect_sources import detect_finetuned, evaluation_set

    dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
    ev = plain(cfg.eval)
    chosen = evaluation_set(dialogues, float(ev["fraction"]), ev.get("limit"), int(ev["seed"]))
    log.info("evaluation set: %d of %d dialogues", len(chosen), len(dialogues))
    start = time.perf_counter()
    if spec["kind"] == "finetuned":
        results = detect_finetuned(cfg.get("ckpt"), spec, chosen, int(cfg.seed))
    else:
        judges = list((plain(cfg.get("judges")) or {}).get("models") or [])
        detector = build_detector(spec, judges, cache=cfg.get("llm_cache"))
        try:
            results = detector.detect(chosen, progress=bool(cfg.get("progress", True)))
        finally:
            detector.close()
    seconds = time.perf_counter() - start
    return predictions_frame(chosen, results, spec["name"]), len(dialogues), seconds


def run_flips(cfg: DictConfig) -> dict[str, float]:
    out = output_dir(cfg)
    flips = plain(cfg.flips)
    if not flips.get("with") or not flips.get("without"):
        from benevaudit.errors import ConfigError

        raise ConfigError("flips needs both flips.with=<judge run with demographics> and "
                          "flips.without=<the same judge without>")
    metrics = write_flips(str(flips["with"]), str(flips["without"]), out)
    write_metrics(metrics, out / "metrics.json")
    log.info("flips: N->BB %s, BB->N %s  run dir: %s",
             {k: metrics.get(f"flips/N_to_BB/{k}") for k in ("wrong", "corrective")},
             {k: metrics.get(f"flips/BB_to_N/{k}") for k in ("wrong", "corrective")}, out)
    return metrics


def run(cfg: DictConfig) -> dict[str, float]:
    from benevaudit.encoders.models import set_offline_defaults
    from benevaudit.pipelines.inputs import check_inputs
    from benevaudit.pipelines.tracking import build_logger, finish_logger
    from benevaudit.report.figures.detection import trigger_png

    set_offline_defaults()
    check_inputs(cfg, "detect")
    flips = plain(cfg.get("flips")) or {}
    if flips.get("with") or flips.get("without"):
        return run_flips(cfg)
    from benevaudit.pipelines.dry_run import detect_requests, dry_run_of

    dry = dry_run_of(cfg)
    if dry is not None:
        return detect_requests(cfg, dry)
    out = output_dir(cfg)
    spec = plain(cfg.detector)
    logger = build_logger(plain(cfg.logger), out, plain(cfg), group_choices(),
                          f"detect-{spec['name']}-{out.name}")
    try:
        if spec["kind"] == "external":
            from benevaudit.pipelines.detect_sources import read_external

            preds = plain(cfg.predictions)
            frame = read_external(preds.get("path"), preds.get("aggregation"),
                                  float(preds.get("threshold", 0.5)))
            corpus_size, seconds = None, 0.0
            frame["detector"] = spec["name"]
        else:
            frame, corpus_size, seconds = detect_dialogues(cfg, spec)
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
