"""``python train.py``: fine-tune the classifier, test the best checkpoint, write the contract files.

Flow: data → split → (training-side interventions) → tokenizer/model → Lightning fit with
checkpointing, early stopping and resume (``audit/training.py``) → single-device test of the best checkpoint →
``metrics.json``, ``predictions.parquet``, ``confusion_matrix.png``, ``model/`` → attribution
(``cue_lexicon.json``, faithfulness, representation shift) → W&B mirror.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

import lightning as L
from omegaconf import DictConfig
from pydantic import model_validator

from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.datamodule import DialogueDataModule
from benevaudit.audit.evaluation import evaluate_classifier, plot_confusion
from benevaudit.outputs.predictions import write_predictions
from benevaudit.plotting import write_png
from benevaudit.audit.interventions.splits import edit_splits
from benevaudit.audit.model_audit import audit_model
from benevaudit.outputs.attribution import write_model_audit
from benevaudit.audit.module import DialogueClassifier
from benevaudit.audit.spec import (
    CallbacksSpec, EditsRun, LoaderSpec, OptimSpec, TrainerSpec, check_resume,
)
from benevaudit.audit.training import (
    build_trainer, resume_path, restore_best, split_accumulation,
)
from benevaudit.encoders.models import load_classifier, load_tokenizer, set_offline_defaults
from benevaudit.encoders.spec import ModelSpec
from benevaudit.generation.embedded import data_files, load_dialogues
from benevaudit.gold import gold_files
from benevaudit.generation.spec import DataSpec
from benevaudit.pipelines.external import (
    ExternalSpec, external_sets, gold_metrics, score_external,
)
from benevaudit.pipelines.config import (
    completes, output_dir, run_logger, validated, write_metrics,
)
from benevaudit.precision import resolve_precision, torch_device
from benevaudit.outputs.inputs import write_inputs
from benevaudit.outputs.tracking import finish_logger, log_test_artifacts
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.specs import NonNegativeInt, RunSpec
from benevaudit.splits import SplitSpec, apply_split, by_split

log = logging.getLogger(__name__)


class TrainRun(RunSpec, EditsRun):
    """Every block train.py reads, checked (files included) before any model work."""

    seed: NonNegativeInt
    resume: Optional[str]
    test_on_edited: bool
    save_model: bool
    data: DataSpec
    split: SplitSpec
    model: ModelSpec
    loader: LoaderSpec
    optim: OptimSpec
    trainer: TrainerSpec
    callbacks: CallbacksSpec
    attribution: AttributionSpec
    external: Optional[dict[str, ExternalSpec]] = None   # gold sets scored after the test

    @model_validator(mode="after")
    def files(self) -> TrainRun:
        check_resume(self.resume)
        return self


def test_best(spec: TrainRun, module: Any, dm: Any, tests: dict[str, list[Dialogue]],
              out: Path, logger: Any, precision: str) -> dict[str, float]:
    """Single-device test pass(es) of the restored best model at the training run's resolved
    ``precision``; writes predictions and plots."""
    device = torch_device(spec.trainer.accelerator)
    metrics: dict[str, float] = {}
    for prefix, data in tests.items():
        dm.raw[prefix] = data
        dm.data.pop(prefix, None)
        dm.setup()
        result = evaluate_classifier(module.model, dm.eval_dataloader(prefix), data, prefix,
                                     device, precision)
        metrics.update(result.metrics)
        metrics.update(gold_metrics(result, data, prefix, f"{prefix}/", spec.seed))
        if prefix == "test":
            write_predictions(result.rows, out / "predictions.parquet")
            condition = spec.intervention.name or "none"
            write_png(out / "confusion_matrix.png", plot_confusion(
                result.labels, result.preds,
                f"{spec.model.source} · {condition} · test · macro-F1 "
                f"{result.metrics.get('test/macro_f1', float('nan')):.3f}\nrun {out.name}"))
            log_test_artifacts(logger, result.metrics, result.labels.tolist(),
                               result.preds.tolist(), result.rows, list(CLASSES))
    return metrics


def fit_settings(spec: TrainRun) -> tuple[str, dict[str, int]]:
    """(the trainer's precision resolved for this machine, the effective-batch figures)."""
    precision = resolve_precision(spec.trainer.precision, spec.trainer.accelerator)
    batch = split_accumulation(spec.trainer, spec.loader.batch_size)
    log.info("effective batch %d = batch %d x accumulation %d x %d process(es)",
             batch["effective_batch"], spec.loader.batch_size,
             batch["accumulate_grad_batches"], batch["world_size"])
    return precision, batch


def fit_parts(spec: TrainRun, splits: dict[str, list[Dialogue]]) -> tuple[Any, Any, Any]:
    """(tokenizer, the Lightning module around the fresh classifier, its data module)."""
    tokenizer = load_tokenizer(spec.model.source)
    hf_model = load_classifier(spec.model.source, seed=spec.seed)
    optim, loader = spec.optim, spec.loader
    module = DialogueClassifier(spec.model.source, json.loads(hf_model.config.to_json_string()),
                                lr=optim.lr, weight_decay=optim.weight_decay,
                                warmup_ratio=optim.warmup_ratio, model=hf_model)
    sides: dict[str, Sequence[Dialogue]] = dict(splits)
    dm = DialogueDataModule(sides, tokenizer, spec.model.max_length, spec.model.head_tokens,
                            batch_size=loader.batch_size, eval_batch_size=loader.eval_batch_size,
                            num_workers=loader.num_workers, group_by_length=loader.group_by_length,
                            seed=spec.seed)
    return tokenizer, module, dm


def attribution_audit(spec: TrainRun, model: Any, tokenizer: Any,
                      splits: dict[str, list[Dialogue]], out: Path,
                      precision: str) -> dict[str, float]:
    """The attribution audit of the trained model, where ``attribution.enabled``."""
    if not spec.attribution.enabled:
        return {}
    made = audit_model(model, tokenizer, splits, spec.attribution, spec.model, spec.seed,
                       precision)
    return write_model_audit(out, made, spec.attribution.heatmap_png_dialogues)


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    set_offline_defaults()
    spec = validated(TrainRun, cfg)   # every file and number, before any model work
    precision, batch = fit_settings(spec)
    out = output_dir(cfg)
    L.seed_everything(spec.seed, workers=True, verbose=False)
    dialogues = load_dialogues(spec.data, cfg.paths.cache_dir)
    splits = by_split(apply_split(dialogues, spec.split, spec.seed))
    clean_test = splits["test"]
    externals = external_sets(spec.external or {}, spec.seed)
    write_inputs(out, {"data": (spec.data.kind, data_files(spec.data, cfg.paths.cache_dir)),
                       **{f"external/{name}": (ext.data.kind, gold_files(ext.data))
                          for name, ext in (spec.external or {}).items()}})
    edits = (spec.interventions, spec.seed)
    splits, metrics = edit_splits(splits, *edits, sides=("train", "validation"))
    tokenizer, module, dm = fit_parts(spec, splits)
    logger = run_logger(cfg, out, out.name)
    try:
        trainer = build_trainer(spec.trainer, spec.callbacks, out, logger, precision=precision,
                                accumulate_grad_batches=batch["accumulate_grad_batches"])
        trainer.fit(module, datamodule=dm, ckpt_path=resume_path(spec.resume, out))
        if trainer.global_rank != 0:
            return {}
        metrics.update(restore_best(trainer, module, precision, batch))
        tests = {"test": clean_test}
        if spec.test_on_edited and metrics.get("intervention/steps"):
            tests["test_edited"] = edit_splits({"test": clean_test}, *edits, ("test",))[0]["test"]
        metrics.update(test_best(spec, module, dm, tests, out, logger, precision))
        device = torch_device(spec.trainer.accelerator)
        for name, items in externals.items():
            metrics.update(score_external(name, items, module.model, dm, device, precision,
                                          spec.seed, out, metrics.get("test/macro_f1")))
        if spec.save_model:
            module.model.save_pretrained(out / "model")
            tokenizer.save_pretrained(out / "model")
        write_metrics(metrics, out / "metrics.json")  # the test figures survive a failed audit
        metrics.update(attribution_audit(spec, module.model, tokenizer,
                                         {**splits, "test": clean_test}, out, precision))
        write_metrics(metrics, out / "metrics.json")
        if logger:
            logger.log_metrics({k: v for k, v in metrics.items() if not k.startswith("test")})
        log.info("test/macro_f1=%.4f  run dir: %s", metrics.get("test/macro_f1", float("nan")), out)
        return metrics
    finally:
        finish_logger(logger)
