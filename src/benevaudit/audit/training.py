"""Fitting the classifier with Lightning: the trainer, its resume point, the per-process
gradient accumulation that keeps the study's effective batch, and the restored best model."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint

from benevaudit.audit.heap import HeldHeap
from benevaudit.audit.spec import CallbacksSpec, CheckpointSpec, TrainerSpec
from benevaudit.errors import ConfigError
from benevaudit.precision import precision_bits

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
        gpu = accelerator in ("gpu", "cuda") or (accelerator == "auto" and torch.cuda.is_available())
        return max(torch.cuda.device_count(), 1) if gpu else 1
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"trainer.devices={devices!r}: expected a count, a list of device "
                          "indices or auto") from None


def split_accumulation(trainer: TrainerSpec, batch_size: int) -> dict[str, int]:
    """Keep the effective batch of one device (batch × ``accumulate_grad_batches``, the study's
    16 × 8 = 128) when training runs on several: each of the ``devices × num_nodes`` processes
    accumulates ``accumulate_grad_batches / world size`` batches (the returned
    ``accumulate_grad_batches``, which the trainer is built with)."""
    accumulate = trainer.accumulate_grad_batches
    devices = device_count(trainer.devices, trainer.accelerator)
    world = devices * trainer.num_nodes
    if world < 1 or accumulate % world:
        valid = ", ".join(str(n) for n in range(1, accumulate + 1) if accumulate % n == 0)
        nodes = f" x trainer.num_nodes={trainer.num_nodes}" if world != devices else ""
        raise ConfigError(
            f"trainer.devices={trainer.devices}{nodes}: {world} processes do not "
            f"divide trainer.accumulate_grad_batches={accumulate}, so the effective batch "
            f"{batch_size} x {accumulate} = {batch_size * accumulate} cannot be kept; valid "
            f"device counts: {valid}")
    return {"world_size": world, "accumulate_grad_batches": accumulate // world,
            "effective_batch": batch_size * accumulate}


class LastCheckpoint(ModelCheckpoint):
    """``last.ckpt``: the newest state, rewritten at every validation and where the fit ends.

    Lightning >= 2.6 rewrites a callback's ``save_last`` file only when that callback writes a
    top-k checkpoint, so ``resume=last`` would restart from the best step and redo every step
    since. Unmonitored with ``save_top_k=1``, this callback keeps its single newest checkpoint
    under the name ``last`` instead."""

    def __init__(self, dirpath: Path) -> None:
        super().__init__(dirpath=str(dirpath), filename=self.CHECKPOINT_NAME_LAST, monitor=None,
                         save_top_k=1, enable_version_counter=False)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Also the steps after the last validation (an epoch whose batches the validation
        interval does not divide), so a longer resumed fit starts where this one stopped."""
        if trainer.fast_dev_run:
            return
        path = str(Path(str(self.dirpath)) / f"{self.CHECKPOINT_NAME_LAST}{self.FILE_EXTENSION}")
        trainer.save_checkpoint(path, self.save_weights_only)
        self.best_model_path = path


def checkpoints(ck: CheckpointSpec, dirpath: Path) -> list[ModelCheckpoint]:
    """The best checkpoint(s) on the monitored metric, then ``last.ckpt`` when ``save_last``
    (second, so the file it writes carries the best callback's state of the same validation)."""
    best = ModelCheckpoint(dirpath=str(dirpath), filename="best-{step}",
                           auto_insert_metric_name=False, monitor=ck.monitor, mode=ck.mode,
                           save_top_k=ck.save_top_k, save_last=False)
    return [best, LastCheckpoint(dirpath)] if ck.save_last else [best]


def build_trainer(trainer: TrainerSpec, callbacks_spec: CallbacksSpec, out: Path, logger: Any,
                  **resolved: Any) -> Any:
    """Lightning's ``Trainer`` with the ``trainer`` options as given but the ``resolved`` ones
    (the precision this machine runs, the per-process accumulation)."""
    callbacks: list[Any] = checkpoints(callbacks_spec.checkpoint, out / "checkpoints")
    stop = callbacks_spec.early_stopping
    if stop:
        callbacks.append(EarlyStopping(monitor=stop.monitor, mode=stop.mode,
                                       patience=stop.patience, min_delta=stop.min_delta))
    if logger:
        callbacks.append(LearningRateMonitor(logging_interval="step"))
    if callbacks_spec.heap:
        callbacks.append(HeldHeap(callbacks_spec.heap.trim_mib))
    return L.Trainer(default_root_dir=str(out), logger=logger, callbacks=callbacks,
                     **{**trainer.lightning_options(), **resolved})


def restore_best(trainer: Any, module: Any, precision: str, batch: dict[str, int]
                 ) -> dict[str, float]:
    """Load the best (else the last) checkpoint's weights into ``module``; the ``train/*``
    figures of the fit."""
    ck = trainer.checkpoint_callback
    best = ck.best_model_path or trainer.checkpoint_callbacks[-1].best_model_path
    module.load_state_dict(torch.load(best, map_location="cpu", weights_only=True)["state_dict"])
    return {"train/best_val_macro_f1": float(ck.best_model_score or 0),
            "train/optimizer_steps": float(trainer.global_step),
            "train/precision_bits": float(precision_bits(precision)),
            **{f"train/{k}": float(v) for k, v in batch.items()}}
