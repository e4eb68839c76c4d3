"""Three-way classification metrics (N/OB/BB) with the names the run contract uses.

Counts first: the confusion matrix of the predictions, then the formulas of
:mod:`benevaudit.metrics.rates` (torchmetrics' conventions, ``average`` always explicit: its
multiclass F1 defaults to *micro*, which is not what the study reports), the same ones the
report's bootstrap applies to resampled confusion matrices. Rates are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benevaudit.metrics.rates import (
    binary_of_confusion, binary_rates, confusion_rates, normalised_confusion,
)
from benevaudit.schema import CLASSES


def classification_metrics(preds: Sequence[int] | np.ndarray, targets: Sequence[int] | np.ndarray, prefix: str = "test",
                           classes: Sequence[str] = CLASSES) -> dict[str, float]:
    """Macro-F1, accuracy, per-class precision/recall/F1, the row-normalised confusion matrix,
    and the binary view B = OB ∪ BB vs N (B positive) under ``binary/``."""
    cm = confusion_counts(preds, targets, len(classes))       # rows: true class
    rates = confusion_rates(cm, prefix, classes)
    out: dict[str, float] = {f"{prefix}/macro_f1": float(rates[f"{prefix}/macro_f1"]),
                             f"{prefix}/accuracy": float(rates[f"{prefix}/accuracy"]),
                             f"{prefix}/n": float(cm.sum())}
    out.update({k: float(v) for k, v in rates.items() if k not in out})
    normalised = normalised_confusion(cm)
    for i, ci in enumerate(classes):
        for j, cj in enumerate(classes):
            out[f"{prefix}/confusion_{ci}_to_{cj}"] = float(normalised[i, j])
    if "N" in classes and len(classes) > 1:
        out.update({k: float(v) for k, v in binary_of_confusion(cm, classes.index("N")).items()})
    return out


def binary_metrics(flagged: Sequence[bool] | np.ndarray, positive: Sequence[bool] | np.ndarray,
                   prefix: str = "binary") -> dict[str, float]:
    """Accuracy, precision, recall and F1 with the biased class B as positive; NaN where a
    denominator is zero, the same numbers detect.py writes, so detectors and the fine-tuned
    classifier share one table."""
    f, p = np.asarray(flagged, dtype=bool), np.asarray(positive, dtype=bool)
    tp, fp, fn, tn = (float(np.sum(a & b)) for a, b in ((p, f), (~p, f), (p, ~f), (~p, ~f)))
    return {k: float(v) for k, v in binary_rates(tp, fp, fn, tn, prefix=prefix).items()}


def confusion_counts(preds: Sequence[int] | np.ndarray, targets: Sequence[int] | np.ndarray,
                     k: int = len(CLASSES)) -> np.ndarray:
    """Raw confusion counts [true, pred] (for plots and W&B)."""
    cm = np.zeros((k, k), dtype=np.int64)
    np.add.at(cm, (np.asarray(targets, dtype=np.int64), np.asarray(preds, dtype=np.int64)), 1)
    return cm
