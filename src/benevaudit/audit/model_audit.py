"""After training: the cue lexicon and the attribution audit of a trained model, from its
``attribution`` block (called by train.py and attribute.py), with the relevance heatmaps of the
dialogues it shows."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from benevaudit.audit.attribution.heatmap import write_heatmap, write_heatmap_png
from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.attribution.suite import AttributionAudit, run_attribution
from benevaudit.audit.evaluation import autocast_dtype
from benevaudit.audit.representation import representation_shift
from benevaudit.encoders.models import attention_implementation
from benevaudit.encoders.spec import ModelSpec
from benevaudit.schema import Dialogue

log = logging.getLogger(__name__)


def write_heatmaps(audit: AttributionAudit, out: Path, png_dialogues: int) -> None:
    """``attribution_heatmap.html`` for every shown dialogue, ``.png`` for the first few."""
    if not audit.shown:
        return
    write_heatmap(audit.shown, audit.attributions, out / "attribution_heatmap.html",
                  title=f"{audit.method} relevance")
    k = min(len(audit.shown), png_dialogues)
    if k:
        write_heatmap_png(audit.shown[:k], audit.attributions[:k], out / "attribution_heatmap.png",
                          title=f"{audit.method} relevance (red: for the explained class, "
                                "blue: against; light italics: truncated)")


def shift_sample(train: list[Dialogue], cap: int | None) -> list[Dialogue]:
    """At most ``cap`` training dialogues, an even, deterministic subsample that keeps the
    class balance of the (class-interleaved) training split."""
    if not cap or len(train) <= cap:
        return train
    return [train[round(i * len(train) / cap)] for i in range(cap)]


def audit_model(model: Any, tokenizer: Any, splits: dict[str, list[Dialogue]],
                spec: AttributionSpec, sequence: ModelSpec, seed: int, out: Path,
                precision: str) -> dict[str, float]:
    """Write ``cue_lexicon.json`` (and the second opinions, faithfulness, heatmaps, shift
    figure); return their metrics. ``splits`` are the data the model was trained and tested
    on; ``sequence`` the ``model`` block it was trained with. Every pass runs on the model's
    device at the run's resolved ``precision`` (autocast)."""
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
        write_heatmaps(audit, out, spec.heatmap_png_dialogues)
        if spec.representation_shift:
            shift = representation_shift(model, tokenizer,
                                         shift_sample(splits["train"], spec.shift_max_train),
                                         splits["test"], out / "representation_shift.png",
                                         batch_size=spec.batch_size,
                                         max_length=sequence.max_length,
                                         head_tokens=sequence.head_tokens)
            metrics.update(shift.metrics)
    log.info("cue lexicon: %s", out / "cue_lexicon.json")
    return metrics
