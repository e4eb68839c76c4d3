"""A benevaudit metric as an Inspect metric: the probe's own scoring over the scored samples.

Each scorer keeps the probe's row for its sample in the score's metadata (``row``: the fields
the probe's scoring reads, such as FairMT's ``task`` and ``verdict_5``); the metric gathers the
rows and calls the probe's scoring function on them, so the rates are the probe's, computed the
same way. It reports the keys that end with one of ``headline`` (every rate, without the
interval bounds, which the probe's own run directory keeps).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Rows = list[dict[str, Any]]


def rows_of(scores: Sequence[Any]) -> Rows:
    """The probe rows the scorer kept, one per scored sample (a sample scored over several
    epochs contributes each epoch's row)."""
    return [dict(s.score.metadata["row"]) for s in scores
            if s.score.metadata and "row" in s.score.metadata]


def rates_metric(name: str, scoring: Callable[[Rows], dict[str, float]],
                 headline: Sequence[str]) -> Any:
    """An Inspect metric named ``benevaudit/<name>_rates`` that returns ``scoring(rows)``'s
    headline keys."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.scorer import metric

    @metric(name=f"benevaudit/{name}_rates")
    def rates() -> Any:
        def compute(scores: Sequence[Any]) -> dict[str, float]:
            computed = scoring(rows_of(scores))
            return {k: float(v) for k, v in computed.items()
                    if any(k.endswith(h) for h in headline)}
        return compute
    return rates()
