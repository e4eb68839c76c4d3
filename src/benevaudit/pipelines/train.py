"""``python train.py``: fine-tune the classifier, test the best checkpoint, write the contract files.

Flow: data → split → (training-side interventions) → tokenizer/model → Lightning fit with
checkpointing, early stopping and resume → single-device test of the best checkpoint →
``metrics.json``, ``predictions.parquet``, ``confusion_matrix.png``, ``model/`` → attribution
(``cue_lexicon.json``, faithfulness, representation shift) → W&B mirror.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from benevaudit.errors import ConfigError
from benevaudit.pipelines.config import group_choices, output_dir, plain, write_metrics
from benevaudit.pipelines.data import apply_split, by_split, load_dialogues
from benevaudit.pipelines.inputs import check_inputs
from benevaudit.schema import CLASSES, Dialogue

log = logging.getLogger(__name__)


def resume_path(resume: str | None, out: Path) -> str | None:
    if not resume:
        return None
    path = out / "checkpoints" / "last.ckpt" if resume == "last" else Path(resume)
    if path.is_dir():
        path = path / "checkpoints" / "last.ckpt"
    if not path.is_file():
        if resume == "last":
            log.info("resume=last: no %s yet, starting fresh", path)
            return None
        raise FileNotFoundError(f"resume={resume}: no checkpoint at {path}")
    return str(path)


def device_count(devices: Any, accelerator: str) -> int:
    """How many devices Lightning will use for ``trainer.devices`` (an int, ``"auto"``/-1, a
    list of indices or a ``"0,1"`` string)."""
    if isinstance(devices, (list, tuple)):
        return len(devices)
    text = str(devices).strip()
    if "," in text:
        return len([d for d in text.split(",") if d.strip()])
    if text in ("auto", "-1"):
        import torch

        gpu = accelerator in ("gpu", "cuda") or (accelerator == "auto" and torch.cuda.is_available())
        return max(torch.cuda.device_count(), 1) if gpu else 1
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"trainer.devices={devices!r}: expected a count, a list of device "
                          "indices or auto") from None


def split_accumulation(trainer_cfg: dict[str, Any], batch_size: int) -> dict[str, int]:
    """Keep the effective batch of one device (batch × ``accumulate_grad_batches``, the study's
    16 × 8 = 128) when training runs on several: each of the ``devices × num_nodes`` processes
    accumulates ``accumulate_grad_batches / world size`` batches. Edits ``trainer_cfg`` in place."""
    accumulate = int(trainer_cfg.get("accumulate_grad_batches") or 1)
    devices = device_count(trainer_cfg.get("devices", 1),
                           str(trainer_cfg.get("accelerator", "auto")))
    world = devices * int(trainer_cfg.get("num_nodes") or 1)
    if world < 1 or accumulate % world:
        valid = ", ".join(str(n) for n in range(1, accumulate + 1) if accumulate % n == 0)
        nodes = f" x trainer.num_nodes={trainer_cfg['num_nodes']}" if world != devices else ""
        raise ConfigError(
            f"trainer.devices={trainer_cfg.get('devices')}{nodes}: {world} processes do not "
            f"divide trainer.accumulate_grad_batches={accumulate}, so the effective batch "
            f"{batch_size} x {accumulate} = {batch_size * accumulate} cannot be kept; valid "
            f"device counts: {valid}")
    trainer_cfg["accumulate_grad_batches"] = accumulate // world
    return {"world_size": world, "accumulate_grad_batches": accumulate // world,
            "effective_batch": batch_size * accumulate}


def build_trainer(trainer_cfg: dict[str, Any], callbacks_cfg: dict[str, Any], out: Path,
                  logger: Any) -> Any:
    import lightning as L
    from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint

    ck = dict(callbacks_cfg["checkpoint"])
    callbacks = [ModelCheckpoint(dirpath=str(out / "checkpoints"), filename="best-{step}",
                                 auto_insert_metric_name=False, **ck)]
    if callbacks_cfg.get("early_stopping"):
        callbacks.append(EarlyStopping(**callbacks_cfg["early_stopping"]))
    if logger:
        callbacks.append(LearningRateMonitor(logging_interval="step"))
    return L.Trainer(default_root_dir=str(out), logger=logger, callbacks=callbacks,
                     **trainer_cfg)


def test_best(cfg: DictConfig, module: Any, dm: Any, tests: dict[str, list[Dialogue]],
              out: Path, logger: Any, precision: str) -> dict[str, float]:
    """Single-device test pass(es) of the restored best model at the training run's resolved
    ``precision``; writes predictions and plots."""
    from benevaudit.audit.evaluation import evaluate_classifier, plot_confusion, write_predictions
    from benevaudit.pipelines.tracking import log_test_artifacts
    from benevaudit.precision import torch_device

    device = torch_device(str(cfg.trainer.accelerator))
    metrics: dict[str, float] = {}
    for prefix, data in tests.items():
        dm.raw[prefix] = data
        dm.data.pop(prefix, None)
        dm.setup()
        result = evaluate_classifier(module.model, dm.eval_dataloader(prefix), data, prefix,
                                     device, precision)
        metrics.update(result.metrics)
        if prefix == "test":
            write_predictions(result.rows, out / "predictions.parquet")
            condition = (plain(cfg.intervention) or {}).get("name", "none")
            plot_confusion(result.labels, result.preds, out / "confusion_matrix.png",
                           f"{cfg.model.source} · {condition} · test · macro-F1 "
                           f"{result.metrics.get('test/macro_f1', float('nan')):.3f}\n"
                           f"run {out.name}")
            log_test_artifacts(logger, result.metrics, result.labels.tolist(),
                               result.preds.tolist(), result.rows, list(CLASSES))
    return metrics


def run(cfg: DictConfig) -> dict[str, float]:
    import lightning as L
    import torch

    from benevaudit.audit.datamodule import DialogueDataModule
    from benevaudit.encoders.models import load_classifier, load_tokenizer, set_offline_defaults
    from benevaudit.audit.module import DialogueClassifier
    from benevaudit.audit.attribution.suite import check_attribution
    from benevaudit.pipelines.model_audit import audit_model
    from benevaudit.pipelines.interventions import edit_splits
    from benevaudit.pipelines.tracking import build_logger, finish_logger
    from benevaudit.precision import precision_bits, resolve_precision

    set_offline_defaults()
    check_inputs(cfg, "train")   # every file and number, before any model work
    check_attribution(plain(cfg.attribution))  # before training, not after it
    trainer_cfg = plain(cfg.trainer)
    precision = resolve_precision(trainer_cfg.get("precision"), trainer_cfg.get("accelerator", "auto"))
    trainer_cfg["precision"] = precision
    batch = split_accumulation(trainer_cfg, int(cfg.loader.batch_size))
    log.info("effective batch %d = batch %d x accumulation %d x %d process(es)",
             batch["effective_batch"], int(cfg.loader.batch_size),
             batch["accumulate_grad_batches"], batch["world_size"])
    out = output_dir(cfg)
    L.seed_everything(int(cfg.seed), workers=True, verbose=False)
    dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
    splits = by_split(apply_split(dialogues, plain(cfg.split), int(cfg.seed)))
    clean_test = splits["test"]
    splits, metrics = edit_splits(splits, cfg, sides=("train", "validation"))

    tokenizer = load_tokenizer(cfg.model.source)
    hf_model = load_classifier(cfg.model.source, seed=int(cfg.seed))
    module = DialogueClassifier(cfg.model.source, json.loads(hf_model.config.to_json_string()),
                                model=hf_model, **plain(cfg.optim))
    dm = DialogueDataModule(splits, tokenizer, int(cfg.model.max_length),
                            int(cfg.model.head_tokens), seed=int(cfg.seed), **plain(cfg.loader))
    logger = build_logger(plain(cfg.logger), out, plain(cfg), group_choices(), out.name)
    try:
        trainer = build_trainer(trainer_cfg, plain(cfg.callbacks), out, logger)
        trainer.fit(module, datamodule=dm, ckpt_path=resume_path(cfg.resume, out))
        if trainer.global_rank != 0:
            return {}
        ck = trainer.checkpoint_callback
        best = ck.best_model_path or ck.last_model_path
        module.load_state_dict(torch.load(best, map_location="cpu", weights_only=True)["state_dict"])
        metrics.update({"train/best_val_macro_f1": float(ck.best_model_score or 0),
                        "train/optimizer_steps": float(trainer.global_step),
                        "train/precision_bits": float(precision_bits(precision)),
                        **{f"train/{k}": float(v) for k, v in batch.items()}})
        tests = {"test": clean_test}
        if cfg.get("test_on_edited") and metrics.get("intervention/steps"):
            tests["test_edited"] = edit_splits({"test": clean_test}, cfg, ("test",))[0]["test"]
        metrics.update(test_best(cfg, module, dm, tests, out, logger, precision))
        if cfg.get("save_model", True):
            module.model.save_pretrained(out / "model")
            tokenizer.save_pretrained(out / "model")
        write_metrics(metrics, out / "metrics.json")  # the test figures survive a failed audit
        metrics.update(audit_model(module.model, tokenizer, {**splits, "test": clean_test},
                                   plain(cfg.attribution), plain(cfg.model), int(cfg.seed), out,
                                   precision))
        write_metrics(metrics, out / "metrics.json")
        if logger:
            logger.log_metrics({k: v for k, v in metrics.items() if not k.startswith("test")})
        log.info("test/macro_f1=%.4f  run dir: %s", metrics.get("test/macro_f1", float("nan")), out)
        return metrics
    finally:
        finish_logger(logger)
