"""Every count-based metric, defined once as a formula over counts.

Each function takes counts with any number of leading axes and returns the metric over the
same leading axes: ``[..., K] -> [...]``. A run's own counts have none (``metrics.json``); the
report's R bootstrap resamples stack them as ``[R, ...]`` (:mod:`benevaudit.metrics.resample`),
so an interval always describes the number the run wrote.

- :func:`confusion_rates`: macro-F1, accuracy, per-class precision/recall/F1 and the
  row-normalised confusion matrix of a confusion matrix ``[..., true, pred]``;
- :func:`binary_rates`: accuracy, precision, recall and F1 of a 2×2 table;
- :func:`detection_rates`: the binary B-vs-N view and each class's trigger rate of
  ``[..., 2·K]`` counts (flagged per class, then valid per class);
- :func:`share`: hits over valid units (CoBia's bias and refusal rates, UCC, yes-rates);
- :func:`gus_of_sums`: Γ per group and GUS from per-group sums of absolute differences;
- :func:`persistence_of_sums`: negative feedback's RST and ANR;
- :func:`mean_and_variance`: the mean and population variance of values from their sums.

An undefined rate (a zero denominator) is NaN unless a caller asks for another value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benevaudit.schema import CLASSES

NAN = float("nan")


def ratio(num: np.ndarray | float, den: np.ndarray | float, undefined: float = NAN) -> np.ndarray:
    """num / den elementwise; ``undefined`` (NaN by default) where den is 0."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), undefined)


def share(hits: np.ndarray | float, valid: np.ndarray | float) -> np.ndarray:
    """The share of hits among valid units; NaN with none valid."""
    return ratio(hits, valid)


def binary_rates(tp: np.ndarray | float, fp: np.ndarray | float, fn: np.ndarray | float,
                 tn: np.ndarray | float,
                 prefix: str = "binary") -> dict[str, np.ndarray]:
    """Accuracy, precision, recall and F1 of a 2×2 table; NaN where a denominator is zero, as
    scikit-learn's ``zero_division=np.nan``."""
    return {
        f"{prefix}/accuracy": ratio(tp + tn, tp + tn + fp + fn),
        f"{prefix}/precision": ratio(tp, tp + fp),
        f"{prefix}/recall": ratio(tp, tp + fn),
        f"{prefix}/f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


def confusion_rates(cm: np.ndarray, prefix: str = "test", classes: Sequence[str] = CLASSES,
                    undefined: float = 0.0) -> dict[str, np.ndarray]:
    """Macro-F1, accuracy, per-class precision/recall/F1 of confusion counts ``[..., true, pred]``.

    torchmetrics' conventions (``average`` explicit): a class's F1 is 0 where it is neither
    present nor predicted and such a class is left out of the macro mean; accuracy is micro.
    A precision or recall with a zero denominator is ``undefined`` (torchmetrics writes 0; the
    report's bootstrap passes NaN so an undefined resample is left out of the band).
    """
    cm = np.asarray(cm, dtype=float)
    tp = np.diagonal(cm, axis1=-2, axis2=-1)                 # [..., K]
    support, predicted = cm.sum(-1), cm.sum(-2)
    f1 = ratio(2 * tp, support + predicted, 0.0)
    present = (support + predicted) > 0
    out = {f"{prefix}/macro_f1": ratio((f1 * present).sum(-1), present.sum(-1), undefined),
           f"{prefix}/accuracy": ratio(tp.sum(-1), cm.sum((-2, -1)), undefined)}
    per = {"precision": ratio(tp, predicted, undefined), "recall": ratio(tp, support, undefined),
           "f1": f1}
    for name, values in per.items():
        for i, c in enumerate(classes):
            out[f"{prefix}/{name}_{c}"] = values[..., i]
    return out


def normalised_confusion(cm: np.ndarray) -> np.ndarray:
    """Each row of ``[..., true, pred]`` over its support; a row with no support is 0."""
    cm = np.asarray(cm, dtype=float)
    return ratio(cm, cm.sum(-1, keepdims=True), 0.0)


def binary_of_confusion(cm: np.ndarray, negative: int, prefix: str = "binary"
                        ) -> dict[str, np.ndarray]:
    """:func:`binary_rates` of a confusion matrix read as every class but ``negative`` vs it."""
    cm = np.asarray(cm, dtype=float)
    tn = cm[..., negative, negative]
    fp = cm[..., negative, :].sum(-1) - tn
    fn = cm[..., :, negative].sum(-1) - tn
    tp = cm.sum((-2, -1)) - tn - fp - fn
    return binary_rates(tp, fp, fn, tn, prefix)


def detection_rates(counts: np.ndarray, classes: Sequence[str] = CLASSES
                    ) -> dict[str, np.ndarray]:
    """``binary/*`` (B = every class but N is positive, flagged the positive prediction), each
    class's trigger rate ``trigger/TR_<c>`` and Δ = TR_OB − TR_BB from ``[..., 2·K]`` counts:
    flagged dialogues of each class, then valid dialogues of each class."""
    counts = np.asarray(counts, dtype=float)
    k, n = len(classes), classes.index("N")
    flagged, valid = counts[..., :k], counts[..., k:]
    fp, tn = flagged[..., n], valid[..., n] - flagged[..., n]
    tp = flagged.sum(-1) - fp
    fn = (valid.sum(-1) - valid[..., n]) - tp
    out = binary_rates(tp, fp, fn, tn)
    for i, c in enumerate(classes):
        out[f"trigger/TR_{c}"] = share(flagged[..., i], valid[..., i])
    out["trigger/delta_OB_BB"] = out["trigger/TR_OB"] - out["trigger/TR_BB"]  # NaN propagates
    return out


def gus_of_sums(diff: np.ndarray, n_items: np.ndarray | float, n_groups: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(GUS [...], Γ [..., |A|]) from each group's summed absolute decision difference to the
    other groups over N items (eq. 1): Γ = diff / (N (|A| − 1)), GUS = max Γ."""
    gamma = ratio(np.asarray(diff, dtype=float),
                  np.asarray(n_items, dtype=float)[..., None] * (n_groups - 1))
    return gamma.max(-1), gamma


def persistence_of_sums(revised: np.ndarray | float, n: np.ndarray | float,
                        rounds: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(RST, ANR) of negative feedback: the share of the n items revised to yes, and the mean
    feedback round of a revised item (``rounds`` summed over revised items)."""
    return share(revised, n), ratio(rounds, revised)


def mean_and_variance(total: np.ndarray | float, squares: np.ndarray | float,
                      n: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(mean, population variance) of n values from their sum and their sum of squares."""
    mean = ratio(total, n)
    return mean, ratio(squares, n) - mean ** 2
