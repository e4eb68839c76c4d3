"""Transfer to human-labelled data: a trained classifier scored on gold sets nobody on the
project wrote (``train.py external=[edos,…]``, ``evaluate.py data=edos``).

Beside the three-way metrics of its test pass, a gold set gets the figures a reviewer asks for:
macro-F1 with a bootstrap interval and its chance level, the threshold-free AUROCs of each class
pair with intervals, and per stratum (EDOS's vectors, DiaSafety's split, a user's stratum
column) the item count, the trigger rate and the mean class probabilities.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import Field

from benevaudit.audit.evaluation import EvalResult, evaluate_classifier
from benevaudit.outputs.predictions import write_predictions
from benevaudit.detectors import evaluation_set
from benevaudit.files import read_json
from benevaudit.gold import DiaSafetyDataSpec, EdosDataSpec, LabelledDataSpec, read_gold
from benevaudit.metrics.transfer import strata_metrics, transfer_metrics
from benevaudit.metrics.verdict import PAIRS, RULE, TRANSFERS, verdict
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.specs import PositiveInt, Spec

log = logging.getLogger(__name__)

GoldData = Annotated[Union[EdosDataSpec, DiaSafetyDataSpec, LabelledDataSpec],
                     Field(discriminator="kind")]


class ExternalSpec(Spec):
    """One block of ``external`` (``conf/external/<name>.yaml``): a gold set and how many of
    its items are scored (``limit``: class-balanced, round-robin; null: every item)."""

    data: GoldData
    limit: Optional[PositiveInt]


def gold_metrics(result: EvalResult, dialogues: Sequence[Dialogue], prefix: str,
                 stratum_prefix: str, seed: int) -> dict[str, float]:
    """Intervals, chance level, AUROCs and strata of one scored gold set."""
    preds = [CLASSES[int(p)] for p in result.preds]
    labels = [d.label for d in dialogues]
    out = transfer_metrics(labels, preds, result.probs, prefix=prefix, seed=seed)
    strata = [d.meta.get("stratum") for d in dialogues]
    if any(s is not None for s in strata):
        out.update(strata_metrics(strata, [p != "N" for p in preds], result.probs,
                                  prefix=stratum_prefix))
    return out


def prefixed(metrics: dict[str, float], prefix: str) -> dict[str, float]:
    """``trigger/*`` and ``binary/*`` of a test pass moved under ``prefix`` (the set's own
    figures must not overwrite the in-distribution ones)."""
    return {k if k.startswith(prefix + "/") else f"{prefix}/{k}": v for k, v in metrics.items()}


def external_sets(external: dict[str, ExternalSpec], seed: int) -> dict[str, list[Dialogue]]:
    """Each gold set's scored items, read before any model work so a bad file fails first."""
    sets = {}
    for name, spec in external.items():
        sets[name] = evaluation_set(read_gold(spec.data), 1.0, spec.limit, seed,
                                    by_dialogue=True)
        log.info("external/%s: %d items of %s", name, len(sets[name]), spec.data.kind)
    return sets


def score_external(name: str, dialogues: list[Dialogue], model: Any, dm: Any, device: str,
                   precision: str, seed: int, out: Path,
                   in_distribution: float | None = None) -> dict[str, float]:
    """``external/<name>/…`` for one gold set, and its ``external_<name>_predictions.parquet``."""
    prefix = f"external/{name}"
    dm.raw[prefix] = dialogues
    dm.data.pop(prefix, None)
    dm.setup()
    result = evaluate_classifier(model, dm.eval_dataloader(prefix), dialogues, prefix, device,
                                 precision)
    metrics = prefixed(result.metrics, prefix)
    metrics.update(gold_metrics(result, dialogues, prefix, prefix + "/", seed))
    write_predictions(result.rows, out / f"external_{name}_predictions.parquet")
    log_verdict(metrics, prefix, name, in_distribution)
    return metrics


def log_verdict(metrics: dict[str, float], prefix: str, name: str,
                in_distribution: float | None = None) -> str:
    """One line a user cannot miss: the figures on the gold set and whether they transfer,
    with the rule that decided it. A failed transfer is logged as a warning."""
    def band(key: str) -> str:
        low, high = (metrics.get(f"{prefix}/{key}_ci_{s}", math.nan) for s in ("low", "high"))
        return f"{metrics.get(f'{prefix}/{key}', math.nan):.3f} [{low:.3f}, {high:.3f}]"

    decided = verdict(metrics, prefix)
    aurocs = "; ".join(f"AUROC {p} {band('auroc_' + p)}" for p in PAIRS
                       if f"{prefix}/auroc_{p}" in metrics)
    where = f"in distribution {in_distribution:.3f}; " if in_distribution is not None else ""
    line = (f"{name}: {decided.upper()} ({where}macro-F1 {band('macro_f1')} vs chance "
            f"{metrics.get(f'{prefix}/chance_macro_f1', math.nan):.3f}"
            f"{'; ' + aurocs if aurocs else ''}). {RULE}")
    (log.info if decided == TRANSFERS else log.warning)(line)
    return decided


def in_distribution_f1(run: Path | None) -> dict[str, float]:
    """``transfer/in_distribution_macro_f1``: the training run's own test macro-F1, read from
    its ``metrics.json`` where there is one, so a transfer figure stands beside it."""
    saved = run / "metrics.json" if run is not None else None
    if saved is None or not saved.is_file():
        return {}
    value = read_json(saved, expected="a run's metrics.json").get("test/macro_f1")
    return {} if not isinstance(value, (int, float)) else {"transfer/in_distribution_macro_f1": float(value)}
