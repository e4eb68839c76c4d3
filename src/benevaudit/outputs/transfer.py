"""The transfer figures of a detect run's predictions: macro-F1 interval and chance level where
the detector makes a three-way prediction, AUROCs where it gives class probabilities, and the
strata of a gold set (``stratum`` column)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benevaudit.metrics.transfer import strata_metrics, transfer_metrics
from benevaudit.schema import CLASSES

PROBABILITIES = tuple(f"prob_{c}" for c in CLASSES)


def frame_probabilities(frame: pd.DataFrame) -> np.ndarray | None:
    """``[N, 3]`` class probabilities, or None where the detector gives none (a guard)."""
    if not set(PROBABILITIES) <= set(frame.columns):
        return None
    probs = frame[list(PROBABILITIES)].to_numpy(dtype=float)
    return probs if np.isfinite(probs).all(axis=1).any() else None


def frame_transfer_metrics(frame: pd.DataFrame, seed: int) -> dict[str, float]:
    """``test/macro_f1_ci_*``, ``test/chance_macro_f1``, ``test/auroc_*`` and
    ``stratum/<value>/*`` of one predictions frame, each where its inputs exist."""
    labels = [None if pd.isna(v) else str(v) for v in frame["label"]]
    probs = frame_probabilities(frame)
    out: dict[str, float] = {}
    if "pred" in frame.columns and frame["pred"].notna().any():
        preds = [None if pd.isna(p) else str(p) for p in frame["pred"]]
        out.update(transfer_metrics(labels, preds, probs, prefix="test", seed=seed))
    if "stratum" in frame.columns:
        flagged = [None if pd.isna(v) else bool(v) for v in frame["flagged"]]
        strata = [None if pd.isna(s) else str(s) for s in frame["stratum"]]
        out.update(strata_metrics(strata, flagged, probs))
    return out
