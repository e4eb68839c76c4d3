"""After training: the cue lexicon and the attribution audit, from the ``attribution`` config."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from benevaudit.schema import Dialogue

log = logging.getLogger(__name__)


def audit_model(model: Any, tokenizer: Any, splits: dict[str, list[Dialogue]],
                attribution: dict[str, Any], model_cfg: dict[str, Any], seed: int,
                out: Path) -> dict[str, float]:
    """Write ``cue_lexicon.json`` (and the second opinions, faithfulness, heatmap, shift figure);
    return their metrics. ``splits`` are the data the model was trained and tested on."""
    if not attribution.get("enabled", True):
        return {}
    from benevaudit.audit.attribution.suite import AttributionOptions, run_attribution
    from benevaudit.audit.representation import representation_shift

    model.set_attn_implementation("eager")  # attention weights: SDPA returns none
    model.eval()
    seq = dict(max_length=int(model_cfg["max_length"]), head_tokens=int(model_cfg["head_tokens"]))
    options = AttributionOptions(
        methods=tuple(attribution["methods"]), target=str(attribution["target"]),
        top_k=int(attribution["top_k"]), min_count=int(attribution["min_count"]),
        batch_size=int(attribution["batch_size"]), n_steps=int(attribution["n_steps"]),
        max_batch_tokens=attribution.get("max_batch_tokens", "auto"),
        logodds=bool(attribution["logodds"]),
        faithfulness_dialogues=attribution.get("faithfulness_dialogues"),
        heatmap_dialogues=int(attribution["heatmap_dialogues"]),
        heatmap_png_dialogues=int(attribution.get("heatmap_png_dialogues", 2)), seed=seed, **seq)
    target = splits[attribution.get("split", "test")]
    _, metrics = run_attribution(model, tokenizer, splits["train"], target, out, options)
    if attribution.get("representation_shift", True):
        train = splits["train"]
        cap = attribution.get("shift_max_train")
        if cap and len(train) > cap:  # an even, deterministic subsample keeps class balance
            train = [train[round(i * len(train) / cap)] for i in range(int(cap))]
        shift = representation_shift(model, tokenizer, train, splits["test"],
                                     out / "representation_shift.png",
                                     batch_size=int(attribution["batch_size"]), **seq)
        metrics.update(shift.metrics)
    model.set_attn_implementation("sdpa")
    log.info("cue lexicon: %s", out / "cue_lexicon.json")
    return metrics
