"""``python attribute.py ckpt=…``: the cue lexicon and attribution audit of any saved classifier.

Reuses the training run's data and split when ``ckpt`` points into a run directory, so the lexicon
is computed over the same test split that ``train.py`` would have used.
"""

from __future__ import annotations

from omegaconf import DictConfig

from benevaudit.pipelines.config import output_dir, plain, write_metrics
from benevaudit.pipelines.data import apply_split, by_split, load_dialogues
from benevaudit.pipelines.evaluate import adopt_run_config, load_frozen, locate


def run(cfg: DictConfig) -> dict[str, float]:
    from benevaudit.audit.models import set_offline_defaults
    from benevaudit.pipelines.attribution import audit_model

    set_offline_defaults()
    out = output_dir(cfg)
    weights, train_run = locate(str(cfg.ckpt))
    adopt_run_config(cfg, train_run)
    dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
    splits = by_split(apply_split(dialogues, plain(cfg.split), int(cfg.seed)))
    model, tokenizer, _ = load_frozen(weights)
    attribution = {**plain(cfg.attribution), "enabled": True}
    metrics = audit_model(model, tokenizer, splits, attribution, plain(cfg.model),
                          int(cfg.seed), out)
    write_metrics(metrics, out / "metrics.json")
    return metrics
