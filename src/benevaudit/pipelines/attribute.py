"""``python attribute.py ckpt=…``: the cue lexicon and attribution audit of any saved classifier.

Reuses the training run's data and split when ``ckpt`` points into a run directory, so the lexicon
is computed over the same test split that ``train.py`` would have used.
"""

from __future__ import annotations

from omegaconf import DictConfig

from benevaudit.pipelines.config import output_dir, plain, write_metrics
from benevaudit.pipelines.evaluate import frozen_model_splits, load_frozen


def run(cfg: DictConfig) -> dict[str, float]:
    from benevaudit.encoders.models import set_offline_defaults
    from benevaudit.pipelines.attribution import audit_model

    set_offline_defaults()
    out = output_dir(cfg)
    weights, splits = frozen_model_splits(cfg)
    model, tokenizer = load_frozen(weights)
    attribution = {**plain(cfg.attribution), "enabled": True}
    metrics = audit_model(model, tokenizer, splits, attribution, plain(cfg.model),
                          int(cfg.seed), out)
    write_metrics(metrics, out / "metrics.json")
    return metrics
