"""Testing a classifier on one split and writing the run contract's files.

``predictions.parquet`` holds one row per dialogue (id, label, pred, p_N, p_OB, p_BB and the
condition fields); ``metrics.json`` holds flat metric names. Evaluation is a plain
single-device pass so every dialogue is counted exactly once, also after DDP training.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from benevaudit.audit.module import predict_logits
from benevaudit.metrics.classification import classification_metrics, confusion_counts
from benevaudit.metrics.detection import trigger_metrics
from benevaudit.plotting import paint_confusion, plt, png
from benevaudit.schema import CLASS_INDEX, CLASSES, Dialogue


class EvalResult(NamedTuple):
    metrics: dict[str, float]
    probs: np.ndarray       # [N, C]
    preds: np.ndarray       # [N]
    labels: np.ndarray      # [N], -1 where unlabelled
    rows: list[dict[str, Any]]


def autocast_dtype(precision: str, device: str) -> Any:
    if "bf16" in str(precision):
        return torch.bfloat16
    if str(precision).startswith("16") and device.startswith("cuda"):
        return torch.float16
    return None


def evaluate_classifier(model: Any, loader: Any, dialogues: Sequence[Dialogue], prefix: str = "test",
                    device: str = "cpu", precision: str = "32") -> EvalResult:
    logits = predict_logits(model, loader, device, autocast_dtype(precision, device))
    probs = torch.softmax(logits, dim=-1).numpy()
    preds = probs.argmax(-1)
    labels = np.asarray(loader.dataset.labels)
    keep = labels >= 0
    metrics = (classification_metrics(preds[keep].tolist(), labels[keep].tolist(), prefix)
               if keep.any() else {})
    if keep.any():  # the detectors' trigger rates, with flagged = pred in {OB, BB}
        metrics.update(trigger_metrics([CLASSES[i] for i in labels[keep]],
                                       preds[keep] != CLASS_INDEX["N"]))
    rows = []
    for d, p, pr in zip(dialogues, preds, probs):
        row: dict[str, Any] = {"id": d.id, "label": d.label, "pred": CLASSES[int(p)]}
        row.update({f"p_{c}": float(v) for c, v in zip(CLASSES, pr)})
        row.update({"split": d.split, "role": d.role, "generator": d.generator,
                    **{f"user_{k}": v for k, v in d.user.items()},
                    "agent": None if d.agent is None else "/".join(d.agent.values())})
        if "stratum" in d.meta:    # a gold set's own taxonomy (EDOS's vector, DiaSafety's split)
            row["stratum"] = str(d.meta["stratum"])
        rows.append(row)
    return EvalResult(metrics, probs, preds, labels, rows)


def plot_confusion(labels: np.ndarray, preds: np.ndarray, title: str) -> bytes:
    """Row-normalised confusion matrix as a PNG (rows: true class)."""
    keep = labels >= 0
    fig, ax = plt.subplots(figsize=(3.6, 3.2), dpi=150)
    paint_confusion(ax, confusion_counts(preds[keep].tolist(), labels[keep].tolist()), title)
    return png(fig)
