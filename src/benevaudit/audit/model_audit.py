"""After training: the cue lexicon and the attribution audit of a trained model, from its
``attribution`` block (called by train.py and attribute.py).

The audit hands back what it found; drawing the relevance heatmap is the report's
(:func:`benevaudit.report.model_audit.write_heatmaps`), which the pipeline calls.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, NamedTuple

import torch

from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.attribution.suite import AttributionAudit, run_attribution
from benevaudit.audit.evaluation import autocast_dtype
from benevaudit.audit.representation import representation_shift
from benevaudit.encoders.models import attention_implementation
from benevaudit.encoders.spec import ModelSpec
from benevaudit.schema import Dialogue

log = logging.getLogger(__name__)


class ModelAudit(NamedTuple):
    metrics: dict[str, float]
    attribution: AttributionAudit     # the lexicon and the relevance of the shown dialogues


def shift_sample(train: list[Dialogue], cap: int | None) -> list[Dialogue]:
    """At most ``cap`` training dialogues, an even, deterministic subsample that keeps the
    class balance of the (class-interleaved) training split."""
    if not cap or len(train) <= cap:
        return train
    return [train[round(i * len(train) / cap)] for i in range(cap)]


def audit_model(model: Any, tokenizer: Any, splits: dict[str, list[Dialogue]],
                spec: AttributionSpec, sequence: ModelSpec, seed: int, out: Path,
                precision: str) -> ModelAudit:
    """Write ``cue_lexicon.json`` (and the second opinions, faithfulness, shift figure); return
    their metrics and the attributions to draw. ``splits`` are the data the model was trained
    and tested on; ``sequence`` the ``model`` block it was trained with. Every pass runs on
    the model's device at the run's resolved ``precision`` (autocast)."""
    model.eval()
    device = next(model.parameters()).device
    dtype = autocast_dtype(precision, device.type)
    # rollout reads attention weights, which SDPA does not return; the model gets its own
    # kernel back afterwards, also when the audit fails
    with attention_implementation(model, "eager"), \
            torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
        audit = run_attribution(model, tokenizer, splits["train"], splits[spec.split], out,
                                spec, sequence, seed)
        metrics = dict(audit.metrics)
        if spec.representation_shift:
            shift = representation_shift(model, tokenizer,
                                         shift_sample(splits["train"], spec.shift_max_train),
                                         splits["test"], out / "representation_shift.png",
                                         batch_size=spec.batch_size,
                                         max_length=sequence.max_length,
                                         head_tokens=sequence.head_tokens)
            metrics.update(shift.metrics)
    log.info("cue lexicon: %s", out / "cue_lexicon.json")
    return ModelAudit(metrics, audit)
