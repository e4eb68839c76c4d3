"""``python attribute.py ckpt=…``: the cue lexicon and attribution audit of any saved classifier.

Reuses the training run's data and split when ``ckpt`` points into a run directory, so the lexicon
is computed over the same test split that ``train.py`` would have used.
"""

from __future__ import annotations

from omegaconf import DictConfig

from benevaudit.audit.checkpoints import load_frozen
from benevaudit.encoders.models import set_offline_defaults
from benevaudit.pipelines.config import completes, output_dir, plain, validated, write_metrics
from benevaudit.pipelines.evaluate import AttributeRun, frozen_model_splits
from benevaudit.precision import resolve_precision, torch_device
from benevaudit.report.model_audit import audit_model


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    set_offline_defaults()
    spec = validated(AttributeRun, cfg)   # every file and number, before any model work
    # the same machine settings as training: device from trainer.accelerator, precision resolved
    device = torch_device(spec.trainer.accelerator)
    precision = resolve_precision(spec.trainer.precision, spec.trainer.accelerator)
    out = output_dir(cfg)
    weights, splits = frozen_model_splits(cfg)
    model, tokenizer = load_frozen(weights)
    attribution = {**spec.attribution.as_dict(), "enabled": True}
    metrics = audit_model(model.to(device), tokenizer, splits, attribution, plain(cfg.model),
                          int(cfg.seed), out, precision)
    write_metrics(metrics, out / "metrics.json")
    return metrics
