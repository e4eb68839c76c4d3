"""Detection metrics: what a detector, a judge or the fine-tuned classifier flags, per true class.

One set of names for every kind of detector, so a report puts them in one table:

- ``binary/*``: accuracy, precision, recall and F1 with B = OB ∪ BB as the positive class and
  "flagged" as the positive prediction;
- ``trigger/*``: the trigger rate of each true class (the share of its dialogues flagged), each
  with a 95% Wilson interval, and the overt–benevolent gap Δ = TR_OB − TR_BB;
- ``test/*`` where a three-way N/OB/BB prediction exists, with the names train.py writes;
- ``detect/*``: how many dialogues were scored and how many verdicts were invalid.

A verdict that could not be parsed is *invalid* (``None``): it is counted in
``detect/invalid_rate`` and never mapped to a class, so every rate is over valid dialogues.
Every ``binary/*`` and ``trigger/*`` key is always written; an undefined value (a class with no
valid dialogue, a precision with nothing flagged) is NaN rather than a misleading 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from benevaudit.llm.judge import invalid_metrics
from benevaudit.metrics.classification import binary_metrics, classification_metrics
from benevaudit.metrics.wilson import newcombe_difference, wilson_interval
from benevaudit.metrics.rates import detection_rates, ratio
from benevaudit.schema import CLASS_INDEX, CLASSES

NAN = float("nan")
THREE_WAY_KEYS: tuple[str, ...] = (
    "test/macro_f1", "test/recall_N", "test/recall_OB", "test/recall_BB", "test/precision_BB",
)
"""The three-way keys written (NaN when no valid prediction) whenever ``pred`` is given."""


def is_missing(value: Any) -> bool:
    """True for None, NaN and pandas' NA: the forms an invalid verdict takes after a Parquet
    round trip."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN is the one float unequal to itself
    except TypeError:                # pandas.NA refuses to become a bool
        return True


def class_codes(values: Sequence[Any], field: str) -> np.ndarray:
    """Class indices of N/OB/BB strings; -1 where missing. Anything else is an error naming the
    position and the valid classes."""
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if is_missing(v):
            codes[i] = -1
        elif v in CLASS_INDEX:
            codes[i] = CLASS_INDEX[v]
        else:
            raise ValueError(f"{field}[{i}] is {v!r}; expected one of {list(CLASSES)} "
                             f"(or None for {'unlabelled' if field == 'labels' else 'invalid'})")
    return codes


def flag_values(flagged: Sequence[Any]) -> np.ndarray:
    """1.0 flagged, 0.0 not flagged, NaN invalid. Accepts bools, 0/1 and None/NaN."""
    out = np.empty(len(flagged), dtype=float)
    for i, v in enumerate(flagged):
        if is_missing(v):
            out[i] = np.nan
        elif isinstance(v, (bool, np.bool_)) or v in (0, 1):
            out[i] = float(bool(v))
        else:
            raise ValueError(f"flagged[{i}] is {v!r}; expected True/False, 1/0, "
                             f"or None for an invalid verdict")
    return out


def _ratio(num: float, den: float) -> float:
    return float(ratio(num, den))


def flag_counts(codes: np.ndarray, flags: np.ndarray, k: int = len(CLASSES)) -> np.ndarray:
    """[2·K] flagged dialogues of each class, then valid dialogues of each class (the counts
    :func:`benevaudit.metrics.rates.detection_rates` reads); every row valid."""
    return np.concatenate([np.bincount(codes, weights=flags.astype(float), minlength=k),
                           np.bincount(codes, minlength=k).astype(float)])


def binary_rates(positive: np.ndarray, flagged: np.ndarray, prefix: str = "binary") -> dict[str, float]:
    """Accuracy, precision, recall and F1 of ``flagged`` against ``positive`` (both boolean, all
    valid); NaN where a denominator is zero, as scikit-learn's ``zero_division=np.nan``."""
    return binary_metrics(flagged, positive, prefix)


def trigger_metrics(labels: Sequence[str], flagged: Sequence[bool]) -> dict[str, float]:
    """Trigger rate of each true class with its 95% Wilson interval, and Δ = TR_OB − TR_BB.

    ``labels`` are class names and ``flagged`` booleans, all valid (drop invalid verdicts
    first). The fine-tuned classifier calls this with flagged = pred ∈ {OB, BB}.
    """
    codes = class_codes(list(labels), "labels")
    flags = np.asarray(flagged, dtype=bool)
    if len(flags) != len(codes):
        raise ValueError(f"labels has {len(codes)} entries but flagged has {len(flags)}")
    return _trigger(flag_counts(codes, flags))


def _trigger(counts: np.ndarray) -> dict[str, float]:
    """``trigger/*`` of [2·K] counts: each rate with its Wilson interval and n, then Δ."""
    rates = detection_rates(counts)
    k = len(CLASSES)
    out: dict[str, float] = {}
    for i, c in enumerate(CLASSES):
        low, high = wilson_interval(int(counts[i]), int(counts[k + i]))
        out[f"trigger/TR_{c}"] = float(rates[f"trigger/TR_{c}"])
        out[f"trigger/TR_{c}_ci_low"] = low
        out[f"trigger/TR_{c}_ci_high"] = high
        out[f"trigger/n_{c}"] = float(counts[k + i])
    out["trigger/delta_OB_BB"] = float(rates["trigger/delta_OB_BB"])
    ob, bb = CLASSES.index("OB"), CLASSES.index("BB")
    low, high = newcombe_difference(int(counts[ob]), int(counts[k + ob]), int(counts[bb]),
                                    int(counts[k + bb]))
    out["trigger/delta_OB_BB_ci_low"], out["trigger/delta_OB_BB_ci_high"] = low, high
    return out


def three_way_metrics(label_codes: np.ndarray, pred: Sequence[Any]) -> dict[str, float]:
    """``test/*`` over labelled dialogues with a valid three-way prediction, through the same
    function train.py uses; the listed keys are NaN when there is none."""
    pred_codes = class_codes(list(pred), "pred")
    if len(pred_codes) != len(label_codes):
        raise ValueError(f"labels has {len(label_codes)} entries but pred has {len(pred_codes)}")
    keep = (label_codes >= 0) & (pred_codes >= 0)
    out = {k: NAN for k in THREE_WAY_KEYS}
    out["test/n"] = float(keep.sum())
    out["test/invalid_rate"] = _ratio(float(np.sum((label_codes >= 0) & (pred_codes < 0))),
                                      float(np.sum(label_codes >= 0)))
    if keep.any():
        full = classification_metrics(pred_codes[keep], label_codes[keep], prefix="test")
        # binary/* there would come from pred; here it comes from the dialogue-level flag
        out.update({k: v for k, v in full.items() if k.startswith("test/")})
    return out


def detection_metrics(labels: Sequence[str | None], flagged: Sequence[bool | None],
                      pred: Sequence[str | None] | None = None) -> dict[str, float]:
    """All detection metrics of one run, as a flat ``{name: number}`` for ``metrics.json``.

    ``flagged`` is the dialogue-level decision, None where the dialogue is invalid (no unit
    flagged and some unit unparseable). Unlabelled dialogues (label None) are left out of every
    rate and counted in ``detect/n_unlabelled``. ``pred`` is the three-way prediction where the
    detector makes one (judges, the fine-tuned classifier), None where invalid.
    """
    y = class_codes(list(labels), "labels")
    f = flag_values(list(flagged))
    if len(f) != len(y):
        raise ValueError(f"labels has {len(y)} entries but flagged has {len(f)}")
    labelled = y >= 0
    valid = labelled & ~np.isnan(f)
    n, n_valid = int(labelled.sum()), int(valid.sum())
    # the count every judge's invalid verdicts share (llm.judge), over labelled dialogues
    counted = invalid_metrics("detect", [None if math.isnan(v) else v for v in f[labelled]])
    out: dict[str, float] = {
        "detect/n": float(n),
        "detect/n_valid": float(n_valid),
        "detect/n_invalid": counted["detect/invalid"],
        "detect/n_unlabelled": float(len(y) - n),
        "detect/invalid_rate": counted["detect/invalid_rate"],
    }
    counts = flag_counts(y[valid], f[valid] == 1.0)
    out.update({k: float(v) for k, v in detection_rates(counts).items()
                if k.startswith("binary/")})
    out.update(_trigger(counts))
    if pred is not None:
        out.update(three_way_metrics(y, pred))
    return out

