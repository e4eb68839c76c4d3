"""After training: the cue lexicon and the attribution audit of a trained model, from the
``attribution`` options (called by train.py and attribute.py)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from benevaudit.audit.attribution.suite import (
    AttributionAudit, AttributionOptions, check_attribution, run_attribution,
)
from benevaudit.audit.evaluation import autocast_dtype
from benevaudit.audit.representation import representation_shift
from benevaudit.encoders.models import attention_implementation
from benevaudit.audit.attribution.heatmap import write_heatmap, write_heatmap_png
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


def audit_model(model: Any, tokenizer: Any, splits: dict[str, list[Dialogue]],
                attribution: dict[str, Any], model_cfg: dict[str, Any], seed: int,
                out: Path, precision: str = "32-true") -> dict[str, float]:
    """Write ``cue_lexicon.json`` (and the second opinions, faithfulness, heatmap, shift figure);
    return their metrics. ``splits`` are the data the model was trained and tested on; every
    pass runs on the model's device at the run's resolved ``precision`` (autocast)."""
    if not attribution["enabled"]:
        return {}
    check_attribution(attribution)
    seq = dict(max_length=int(model_cfg["max_length"]), head_tokens=int(model_cfg["head_tokens"]))
    options = AttributionOptions(
        methods=tuple(attribution["methods"]), target=str(attribution["target"]),
        top_k=int(attribution["top_k"]), min_count=int(attribution["min_count"]),
        words_only=bool(attribution["words_only"]),
        batch_size=int(attribution["batch_size"]), n_steps=int(attribution["n_steps"]),
        max_batch_tokens=attribution["max_batch_tokens"],
        logodds=bool(attribution["logodds"]),
        faithfulness_dialogues=attribution["faithfulness_dialogues"],
        heatmap_dialogues=int(attribution["heatmap_dialogues"]),
        seed=seed,
        cache_dir=attribution["cache_dir"], **seq)
    train = splits["train"]
    cap = attribution["shift_max_train"]
    if cap and len(train) > cap:  # an even, deterministic subsample keeps class balance
        train = [train[round(i * len(train) / cap)] for i in range(int(cap))]
    model.eval()
    device = next(model.parameters()).device
    dtype = autocast_dtype(precision, device.type)
    # rollout reads attention weights, which SDPA does not return; the model gets its own
    # kernel back afterwards, also when the audit fails
    with attention_implementation(model, "eager"), \
            torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
        audit = run_attribution(model, tokenizer, splits["train"],
                                splits[attribution["split"]], out, options)
        metrics = audit.metrics
        write_heatmaps(audit, out, int(attribution["heatmap_png_dialogues"]))
        if attribution["representation_shift"]:
            shift = representation_shift(model, tokenizer, train, splits["test"],
                                         out / "representation_shift.png",
                                         batch_size=int(attribution["batch_size"]), **seq)
            metrics.update(shift.metrics)
    log.info("cue lexicon: %s", out / "cue_lexicon.json")
    return metrics
