"""Three-way classification metrics (N/OB/BB) with the names the run contract uses.

All values come from torchmetrics with ``average`` always explicit (its multiclass F1 defaults
to *micro*, which is not what the study reports). Rates are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benevaudit.schema import CLASSES


def classification_metrics(preds: Sequence[int], targets: Sequence[int], prefix: str = "test",
                           classes: Sequence[str] = CLASSES) -> dict[str, float]:
    """Macro-F1, accuracy, per-class precision/recall/F1, the row-normalised confusion matrix,
    and the binary view B = OB ∪ BB vs N (B positive) under ``binary/``."""
    import torch
    from torchmetrics.functional.classification import (
        multiclass_accuracy, multiclass_confusion_matrix, multiclass_f1_score,
        multiclass_precision, multiclass_recall,
    )

    p = torch.as_tensor(np.asarray(preds, dtype=np.int64))
    t = torch.as_tensor(np.asarray(targets, dtype=np.int64))
    k = len(classes)
    out: dict[str, float] = {
        f"{prefix}/macro_f1": float(multiclass_f1_score(p, t, k, average="macro")),
        f"{prefix}/accuracy": float(multiclass_accuracy(p, t, k, average="micro")),
        f"{prefix}/n": float(len(t)),
    }
    per = {
        "precision": multiclass_precision(p, t, k, average=None),
        "recall": multiclass_recall(p, t, k, average=None),
        "f1": multiclass_f1_score(p, t, k, average=None),
    }
    for name, values in per.items():
        for c, v in zip(classes, values.tolist()):
            out[f"{prefix}/{name}_{c}"] = float(v)
    cm = multiclass_confusion_matrix(p, t, k, normalize="true")  # rows: true class
    for i, ci in enumerate(classes):
        for j, cj in enumerate(classes):
            out[f"{prefix}/confusion_{ci}_to_{cj}"] = float(cm[i, j])
    if "N" in classes and len(classes) > 1:
        out.update(binary_metrics(p != classes.index("N"), t != classes.index("N")))
    return out


def binary_metrics(flagged: Sequence[bool], positive: Sequence[bool],
                   prefix: str = "binary") -> dict[str, float]:
    """Accuracy, precision, recall and F1 with the biased class B as positive; NaN where a
    denominator is zero, the same numbers detect.py writes, so detectors and the fine-tuned
    classifier share one table."""
    from benevaudit.metrics.detection import binary_rates

    return binary_rates(np.asarray(positive, dtype=bool), np.asarray(flagged, dtype=bool),
                        prefix)


def confusion_counts(preds: Sequence[int], targets: Sequence[int], k: int = len(CLASSES)) -> np.ndarray:
    """Raw confusion counts [true, pred] (for plots and W&B)."""
    cm = np.zeros((k, k), dtype=np.int64)
    np.add.at(cm, (np.asarray(targets, dtype=np.int64), np.asarray(preds, dtype=np.int64)), 1)
    return cm
