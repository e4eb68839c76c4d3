"""``python evaluate.py ckpt=…``: a frozen classifier meets a (possibly edited) test split.

``ckpt`` is a training run directory, its ``model/`` directory, or a Lightning ``.ckpt``. When
the run directory's ``.hydra/config.yaml`` is found, its data, split, seed and sequence settings
are reused (``reuse_run_data=true``), so the test split is exactly the one the model was tested on.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal, Optional

from omegaconf import DictConfig, OmegaConf, open_dict
from pydantic import model_validator

from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.checkpoints import load_frozen, locate
from benevaudit.audit.datamodule import DialogueDataModule
from benevaudit.audit.evaluation import evaluate_classifier, plot_confusion, write_predictions
from benevaudit.audit.interventions.splits import edit_splits
from benevaudit.audit.spec import (
    InterventionSpec, LexiconSpec, LoaderSpec, TrainerSpec, check_ckpt,
)
from benevaudit.encoders.models import set_offline_defaults
from benevaudit.errors import ConfigError
from benevaudit.encoders.spec import ModelSpec
from benevaudit.generation.embedded import load_dialogues
from benevaudit.generation.spec import DataSpec
from benevaudit.pipelines.config import (
    completes, output_dir, plain, run_logger, validated, write_metrics,
)
from benevaudit.precision import resolve_precision, torch_device
from benevaudit.outputs.tracking import finish_logger
from benevaudit.schema import Dialogue
from benevaudit.specs import NonNegativeInt, RunSpec, Spec
from benevaudit.splits import SplitSpec, apply_split, by_split

log = logging.getLogger(__name__)


class FrozenRun(RunSpec):
    """What evaluate.py and attribute.py share: a saved classifier and the data it meets."""

    seed: NonNegativeInt
    ckpt: Optional[str]
    reuse_run_data: bool
    data: DataSpec
    split: SplitSpec
    model: ModelSpec
    trainer: TrainerSpec

    @model_validator(mode="before")
    @classmethod
    def given(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("ckpt", "???") == "???":   # `ckpt: ???` unset
            raise ConfigError("ckpt is required: ckpt=<a train run directory, its model/ "
                              "directory, or a .ckpt file>")
        return data

    @model_validator(mode="after")
    def readable(self) -> FrozenRun:
        check_ckpt(self.ckpt)
        return self


class EvaluateRun(FrozenRun):
    eval_split: Literal["train", "validation", "test"]
    loader: LoaderSpec
    intervention: InterventionSpec
    lexicon: LexiconSpec

    @model_validator(mode="after")
    def edits(self) -> EvaluateRun:
        self.intervention.check(self.lexicon.path)
        return self


class AttributeRun(FrozenRun):
    attribution: AttributionSpec


def adopt_run_config(cfg: DictConfig, run: Path | None) -> None:
    """Reuse the training run's data, split, seed and sequence settings."""
    if run is None or not cfg.reuse_run_data:
        return
    saved = run / ".hydra" / "config.yaml"
    if not saved.is_file():
        return
    train_cfg = OmegaConf.load(saved)
    if not isinstance(train_cfg, DictConfig):
        raise ConfigError(f"{saved}: expected the training run's config (a mapping)")
    with open_dict(cfg):
        for key in ("data", "split", "seed"):
            if key in train_cfg:
                cfg[key] = train_cfg[key]
        for key in ("max_length", "head_tokens"):
            cfg.model[key] = train_cfg.model[key]
    log.info("reusing data/split/seed of the training run %s", run)


def frozen_model_splits(cfg: DictConfig) -> tuple[Path, dict[str, list[Dialogue]]]:
    """(weights path, split dialogues) for ``cfg.ckpt``, adopting its training run's settings."""
    weights, train_run = locate(str(cfg.ckpt))
    adopt_run_config(cfg, train_run)
    dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
    return weights, by_split(apply_split(dialogues, SplitSpec.of(plain(cfg.split), "split"),
                                      int(cfg.seed)))


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    set_offline_defaults()
    spec = validated(EvaluateRun, cfg)   # every file and number, before any model work
    # the run's machine settings: the model runs where and how the trainer config says
    device = torch_device(spec.trainer.accelerator)
    precision = resolve_precision(spec.trainer.precision, spec.trainer.accelerator)
    out = output_dir(cfg)
    weights, splits = frozen_model_splits(cfg)
    split = spec.eval_split
    data = splits[split]
    edited, metrics = edit_splits({split: data}, spec.intervention.as_dict(), spec.lexicon.path,
                                  int(cfg.seed), sides=(split,))   # the training run's seed
    model, tokenizer = load_frozen(weights)
    dm = DialogueDataModule({split: edited[split]}, tokenizer, int(cfg.model.max_length),
                            int(cfg.model.head_tokens), seed=int(cfg.seed),
                            **spec.loader.as_dict())
    dm.setup()
    logger = run_logger(cfg, out, out.name)
    try:
        # metrics are named after the evaluated split: test/…, validation/…, train/…
        result = evaluate_classifier(model, dm.eval_dataloader(split), edited[split], split,
                                     device, precision)
        metrics.update(result.metrics)
        write_predictions(result.rows, out / "predictions.parquet")
        name = spec.intervention.name or "none"
        f1 = result.metrics.get(f"{split}/macro_f1", float("nan"))
        plot_confusion(result.labels, result.preds, out / "confusion_matrix.png",
                       f"{weights.name} · {split} · {name} · macro-F1 {f1:.3f}")
        if logger:
            logger.log_metrics(metrics)
        write_metrics(metrics, out / "metrics.json")
        log.info("%s/macro_f1=%.4f  run dir: %s", split, f1, out)
        return metrics
    finally:
        finish_logger(logger)
