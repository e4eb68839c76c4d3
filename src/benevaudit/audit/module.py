"""The LightningModule that fine-tunes a sequence classifier with the study's recipe.

AdamW (lr 2e-5, weight decay 0.01 on all weights but biases and LayerNorm), 6% linear warm-up
then cosine decay to zero over the estimated optimiser steps, unweighted cross-entropy.
Clipping, precision, accumulation, validation cadence and early stopping are Trainer settings
(see ``conf/trainer`` and ``conf/callbacks``). Hyperparameters are stored as plain types so
checkpoints load with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import torch
from torchmetrics.classification import MulticlassF1Score

from benevaudit.schema import CLASSES


def warmup_cosine(step: int, total: int, warmup: int) -> float:
    """Learning-rate multiplier: linear 0→1 over ``warmup`` steps, then cosine 1→0."""
    if step < warmup:
        return (step + 1) / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def clip_grad_norm(params: list[torch.Tensor], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` without its multiply by exactly 1.0 when the norm is
    within ``max_norm``: the same gradients, one pass over all of them fewer. Only on the CPU,
    where reading the norm costs no device synchronisation; a non-finite norm multiplies as
    ``clip_grad_norm_`` does."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    norm = torch.nn.utils.get_total_norm(grads)
    on_cpu = all(g.device.type == "cpu" for g in grads)
    if not on_cpu or not bool(max_norm / (norm + 1e-6) >= 1.0):
        torch.nn.utils.clip_grads_with_norm_(params, max_norm, norm)


class DialogueClassifier(L.LightningModule):
    def __init__(self, model_source: str, hf_config: dict[str, Any], lr: float = 2e-5,
                 weight_decay: float = 0.01, warmup_ratio: float = 0.06,
                 model: Any = None) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["model"])
        if model is None:  # restoring from a checkpoint: rebuild from the stored config
            # transformers is heavy and loads on first use
            from transformers import AutoConfig, AutoModelForSequenceClassification

            config = AutoConfig.for_model(**hf_config)
            model = AutoModelForSequenceClassification.from_config(config)
        self.model = model.train()  # from_pretrained returns eval mode (dropout off)
        k = len(CLASSES)
        self.val_f1 = MulticlassF1Score(num_classes=k, average="macro")

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits  # [B, C]

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        logits = self(batch["input_ids"], batch["attention_mask"])
        loss = torch.nn.functional.cross_entropy(logits.float(), batch["labels"])
        self.log("train/loss", loss, prog_bar=True, batch_size=len(logits))
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        logits = self(batch["input_ids"], batch["attention_mask"])
        loss = torch.nn.functional.cross_entropy(logits.float(), batch["labels"])
        self.val_f1.update(logits.argmax(-1), batch["labels"])
        self.log("val/loss", loss, batch_size=len(logits), sync_dist=True)

    def on_validation_epoch_end(self) -> None:
        self.log("val/macro_f1", self.val_f1.compute(), prog_bar=True, sync_dist=True)
        self.val_f1.reset()

    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any,
                       optimizer_closure: Any = None) -> None:
        """Step, then drop the gradients at once. Lightning clears them only after the next
        batch's forward pass, so a model-sized set of stale gradients would sit in memory
        through every forward, at the peak of the step (transformers' Trainer clears them here)."""
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
        optimizer.zero_grad(set_to_none=True)

    def _scaled(self) -> bool:
        """Whether gradients reach the optimiser scaled (fp16 mixed precision's loss scaler)."""
        return str(self.trainer.precision).startswith("16")

    def configure_gradient_clipping(self, optimizer: Any, gradient_clip_val: float | None = None,
                                    gradient_clip_algorithm: str | None = None) -> None:
        """Clip as Lightning does, also beside a fused optimiser under bf16-mixed. Lightning
        refuses any fused optimiser under mixed precision, since with a loss scaler the step
        unscales internally; bf16 has no scaler, so the gradients are already true ones and
        ``clip_grad_norm_`` over them is the same clipping (Lightning's own call)."""
        if self._scaled() or not gradient_clip_val:
            return super().configure_gradient_clipping(optimizer, gradient_clip_val,
                                                       gradient_clip_algorithm)
        params = [p for group in optimizer.param_groups for p in group["params"]]
        if gradient_clip_algorithm in (None, "norm"):
            clip_grad_norm(params, gradient_clip_val)
        else:
            torch.nn.utils.clip_grad_value_(params, gradient_clip_val)
        return None

    def configure_optimizers(self) -> dict[str, Any]:
        decay: list[torch.Tensor] = []
        no_decay: list[torch.Tensor] = []
        for name, p in self.model.named_parameters():
            if p.requires_grad:
                (no_decay if p.ndim < 2 or "LayerNorm" in name else decay).append(p)
        # the fused kernel updates each parameter in one pass: no per-step temporaries the size
        # of the model (the foreach default holds several), and it is what transformers' Trainer
        # uses. Not under a gradient scaler (16-mixed): a fused step unscales internally, after
        # the recipe's clipping at 1.0 would have read scaled gradients
        fused = not self._scaled() and all(
            p.device.type in ("cpu", "cuda") and p.dtype.is_floating_point
            for p in decay + no_decay)
        opt = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.hparams.weight_decay},
             {"params": no_decay, "weight_decay": 0.0}], lr=self.hparams.lr, fused=fused)
        total = max(1, int(self.trainer.estimated_stepping_batches))
        warmup = round(self.hparams.warmup_ratio * total)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: warmup_cosine(s, total, warmup))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


@torch.no_grad()
def predict_logits(model: torch.nn.Module, loader: Any, device: str | torch.device = "cpu",
                   autocast_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Logits in dataset order from one single-device pass (no distributed duplication)."""
    model.eval().to(device)
    n = len(loader.dataset)
    out = torch.empty((n, len(CLASSES)), dtype=torch.float32)
    dev = torch.device(device)
    for batch in loader:
        with torch.autocast(dev.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits = model(input_ids=batch["input_ids"].to(dev),
                           attention_mask=batch["attention_mask"].to(dev)).logits
        out[batch["index"]] = logits.float().cpu()
    return out
