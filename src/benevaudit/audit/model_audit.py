"""After training: the cue lexicon and the attribution audit of a trained model, from its
``attribution`` block (called by train.py and attribute.py), and the representation shift;
computed and handed back, written by ``benevaudit.outputs.attribution``."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.attribution.suite import AttributionAudit, run_attribution
from benevaudit.audit.evaluation import autocast_dtype
from benevaudit.audit.representation import ShiftResult, representation_shift
from benevaudit.encoders.models import attention_implementation
from benevaudit.encoders.spec import ModelSpec
from benevaudit.schema import Dialogue


class ModelAudit(NamedTuple):
    """A trained model's audit: the attribution audit, the metrics of everything, and the
    representation shift (None where ``attribution.representation_shift`` is off)."""

    attribution: AttributionAudit
    metrics: dict[str, float]
    shift: ShiftResult | None


def shift_sample(train: list[Dialogue], cap: int | None) -> list[Dialogue]:
    """At most ``cap`` training dialogues, an even, deterministic subsample that keeps the
    class balance of the (class-interleaved) training split."""
    if not cap or len(train) <= cap:
        return train
    return [train[round(i * len(train) / cap)] for i in range(cap)]


def audit_model(model: Any, tokenizer: Any, splits: dict[str, list[Dialogue]],
                spec: AttributionSpec, sequence: ModelSpec, seed: int,
                precision: str) -> ModelAudit:
    """The cue lexicon (and the second opinions, faithfulness, the shown relevance, the
    representation shift) with their metrics. ``splits`` are the data the model was trained
    and tested on; ``sequence`` the ``model`` block it was trained with. Every pass runs on the
    model's device at the run's resolved ``precision`` (autocast)."""
    model.eval()
    device = next(model.parameters()).device
    dtype = autocast_dtype(precision, device.type)
    # rollout reads attention weights, which SDPA does not return; the model gets its own
    # kernel back afterwards, also when the audit fails
    with attention_implementation(model, "eager"), \
            torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
        audit = run_attribution(model, tokenizer, splits["train"], splits[spec.split], spec,
                                sequence, seed)
        metrics = dict(audit.metrics)
        shift = None
        if spec.representation_shift:
            shift = representation_shift(model, tokenizer,
                                         shift_sample(splits["train"], spec.shift_max_train),
                                         splits["test"], batch_size=spec.batch_size,
                                         max_length=sequence.max_length,
                                         head_tokens=sequence.head_tokens)
            metrics.update(shift.metrics)
    return ModelAudit(audit, metrics, shift)
