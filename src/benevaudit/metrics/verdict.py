"""The transfer verdict: whether a classifier's figures hold on human-labelled data, read from
intervals, not point estimates. The report states the rule (``RULE``) beside every verdict and
the runs log it, so the same words reach the user wherever a transfer figure appears."""

from __future__ import annotations

import math
from collections.abc import Mapping

PAIRS = ("BB_vs_N", "BB_vs_OB", "OB_vs_N")
TRANSFERS, FAILS, UNDETERMINED = "transfers", "does not transfer", "undetermined"
RULE = ("Verdict: “transfers” when the external macro-F1 interval lies above chance (ci_low > "
        "chance) and every AUROC interval present lies above 0.5 (ci_low > 0.5); “does not "
        "transfer” when one of these intervals does not; “undetermined” when none fails but the "
        "macro-F1 interval, the chance level or a present AUROC's interval is missing.")


def finite(metrics: Mapping[str, float], key: str) -> float | None:
    value = metrics.get(key)
    return float(value) if value is not None and math.isfinite(value) else None


def verdict(metrics: Mapping[str, float], prefix: str) -> str:
    """Whether a classifier's ranking survives the move to human data, read from intervals, not
    point estimates: a macro-F1 that beats chance only by its mean, or an AUROC whose interval
    reaches 0.5, is not evidence of transfer. One failing interval decides "does not
    transfer"; a missing one leaves it "undetermined". AUROCs absent because the set lacks one
    of the pair's classes (DiaSafety has no BB) are not asked for. See ``RULE``."""
    prefix = prefix.rstrip("/") + "/"
    checks = [(finite(metrics, f"{prefix}macro_f1_ci_low"),
               finite(metrics, f"{prefix}chance_macro_f1"))]
    for pair in PAIRS:
        if finite(metrics, f"{prefix}auroc_{pair}") is not None:
            checks.append((finite(metrics, f"{prefix}auroc_{pair}_ci_low"), 0.5))
    if any(low is not None and bar is not None and low <= bar for low, bar in checks):
        return FAILS
    if any(low is None or bar is None for low, bar in checks):
        return UNDETERMINED
    return TRANSFERS
