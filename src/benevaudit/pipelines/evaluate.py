"""``python evaluate.py ckpt=…``: a frozen classifier meets a (possibly edited) test split.

``ckpt`` is a training run directory, its ``model/`` directory, or a Lightning ``.ckpt``. When
the run directory's ``.hydra/config.yaml`` is found, its data, split, seed and sequence settings
are reused (``reuse_run_data=true``), so the test split is exactly the one the model was tested on.
A gold set given as ``data`` (``data=edos|diasafety|labelled``) is a transfer test instead: every
item is scored (``eval.limit``: a class-balanced draw; ``split.strategy=existing``: only its
``eval_split``), with intervals, AUROCs and strata beside the test metrics, and the training
run's own test macro-F1 as ``transfer/in_distribution_macro_f1``.
"""

from __future__ import annotations

import logging
from typing import Literal, Optional

from omegaconf import DictConfig

from benevaudit.audit.datamodule import DialogueDataModule
from benevaudit.audit.evaluation import evaluate_classifier, plot_confusion
from benevaudit.outputs.predictions import write_predictions
from benevaudit.plotting import write_png
from benevaudit.audit.interventions.splits import edit_splits
from benevaudit.audit.spec import EditsRun, LoaderSpec
from benevaudit.detectors import evaluation_set
from benevaudit.generation.embedded import data_files
from benevaudit.gold import is_gold
from benevaudit.outputs.inputs import write_inputs
from benevaudit.pipelines.external import gold_metrics, in_distribution_f1, log_verdict
from benevaudit.specs import PositiveInt, Spec
from benevaudit.pipelines.config import completes, run_logger, write_metrics
from benevaudit.pipelines.frozen import FrozenRun, open_frozen
from benevaudit.outputs.tracking import finish_logger

log = logging.getLogger(__name__)


class GoldEvalSpec(Spec):
    """``eval``: how many items of a gold set are scored (null: all; else class-balanced)."""

    limit: Optional[PositiveInt]


class EvaluateRun(FrozenRun, EditsRun):
    eval_split: Literal["train", "validation", "test"]
    eval: GoldEvalSpec
    loader: LoaderSpec


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    frozen = open_frozen(EvaluateRun, cfg)   # every file and number, before any model work
    spec, out, split = frozen.spec, frozen.out, frozen.spec.eval_split
    write_inputs(out, {"data": (spec.data.kind, data_files(spec.data, cfg.paths.cache_dir))})
    pool = frozen.splits[split]
    gold = is_gold(spec.data)
    if gold:
        pool = evaluation_set(pool, 1.0, spec.eval.limit, spec.seed, by_dialogue=True)
        log.info("%s: %d items scored", spec.data.kind, len(pool))
    edited, metrics = edit_splits({split: pool}, spec.interventions, spec.seed,
                                  sides=(split,))
    loader = spec.loader
    dm = DialogueDataModule({split: edited[split]}, frozen.tokenizer, spec.model.max_length,
                            spec.model.head_tokens, batch_size=loader.batch_size,
                            eval_batch_size=loader.eval_batch_size,
                            num_workers=loader.num_workers, group_by_length=loader.group_by_length,
                            seed=spec.seed)
    dm.setup()
    logger = run_logger(cfg, out, out.name)
    try:
        # metrics are named after the evaluated split: test/…, validation/…, train/…
        result = evaluate_classifier(frozen.model, dm.eval_dataloader(split), edited[split],
                                     split, frozen.device, frozen.precision)
        metrics.update(result.metrics)
        metrics.update(gold_metrics(result, edited[split], split, "", spec.seed) if gold else
                       gold_metrics(result, edited[split], split, f"{split}/", spec.seed))
        if gold:
            metrics.update(in_distribution_f1(frozen.run))
            log_verdict(metrics, split, spec.data.kind,
                        metrics.get("transfer/in_distribution_macro_f1"))
        write_predictions(result.rows, out / "predictions.parquet")
        name = spec.intervention.name or "none"
        f1 = result.metrics.get(f"{split}/macro_f1", float("nan"))
        write_png(out / "confusion_matrix.png", plot_confusion(
            result.labels, result.preds,
            f"{frozen.weights.name} · {split} · {name} · macro-F1 {f1:.3f}"))
        if logger:
            logger.log_metrics(metrics)
        write_metrics(metrics, out / "metrics.json")
        log.info("%s/macro_f1=%.4f  run dir: %s", split, f1, out)
        return metrics
    finally:
        finish_logger(logger)
