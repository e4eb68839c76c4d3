"""The test split meets the best validation checkpoint, not the last weights of the fit.

A learning rate that ramps into divergence (the warm-up spans the whole run, up to a step
size a random 2-layer BERT cannot bear) makes validation macro-F1 peak early and then fall,
so the last weights are worse than the best; ``test/*``, ``predictions.parquet`` and
``model/`` must then all be the best checkpoint's. The fit's final weights are saved just
before the restore, so the test reads the weights the fit ended with whatever the checkpoint
callbacks keep."""

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import torch

from benevaudit.pipelines import evaluate, train
from test_train import cfg_for, compose_for

PROBS = ["p_N", "p_OB", "p_BB"]
# batch 4 x 3 epochs = 54 steps, 12 validations; lr ramps linearly to 1e-2 over the run
DIVERGING = ("trainer.max_epochs=3", "loader.batch_size=4", "optim.lr=1.0e-2",
             "optim.warmup_ratio=0.99", "attribution=none", "save_model=true",
             "trainer.enable_progress_bar=false")


def frozen_predictions(ckpt: Path, tmp: Path) -> tuple[dict[str, float], pd.DataFrame]:
    """(test metrics, predictions) of one checkpoint, from evaluate.py on the same test split."""
    metrics = evaluate.run(compose_for("evaluate", tmp, f"ckpt={ckpt}"))
    preds = pd.read_parquet(tmp / "evaluate" / "predictions.parquet")
    return metrics, preds.set_index("id").sort_index()


def state_dict(ckpt: Path) -> dict[str, torch.Tensor]:
    """The classifier's weights held in a Lightning checkpoint (module prefix dropped)."""
    saved = torch.load(ckpt, map_location="cpu", weights_only=True)["state_dict"]
    return {k.removeprefix("model."): v for k, v in saved.items() if k.startswith("model.")}


def keep_final_weights(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Save the fit's final state to ``path`` as train.py restores the best over it."""
    restore = train.restore_best

    def save_then_restore(trainer: Any, module: Any, *args: Any) -> dict[str, float]:
        trainer.save_checkpoint(path)
        return restore(trainer, module, *args)

    monkeypatch.setattr(train, "restore_best", save_then_restore)


@pytest.mark.slow
def test_test_split_model_and_predictions_come_from_the_best_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import AutoModelForSequenceClassification

    final = tmp_path / "final.ckpt"
    keep_final_weights(monkeypatch, final)
    metrics = train.run(cfg_for(tmp_path, *DIVERGING))
    run = tmp_path / "run"
    rows = list(csv.DictReader(open(run / "csv" / "metrics.csv")))
    vals = [float(r["val/macro_f1"]) for r in rows if r.get("val/macro_f1")]
    # the premise: an early peak, then worse weights at the end of the fit
    assert max(vals) == pytest.approx(metrics["train/best_val_macro_f1"])
    assert vals[-1] < max(vals) - 0.1, f"validation macro-F1 did not fall after its peak: {vals}"

    [best] = sorted((run / "checkpoints").glob("best-*.ckpt"))
    best_metrics, best_preds = frozen_predictions(best, tmp_path / "best")
    final_metrics, final_preds = frozen_predictions(final, tmp_path / "final")
    gap = (best_preds[PROBS] - final_preds[PROBS]).abs().to_numpy().max()
    assert gap > 0.05, "best and final weights predict alike: the run shows nothing"

    # test/* as the best checkpoint scores them (and not as the final weights do)
    saved = json.loads((run / "metrics.json").read_text())
    tests = sorted(k for k in best_metrics if k.startswith("test/"))
    assert tests and all(saved[k] == pytest.approx(best_metrics[k], abs=1e-6) for k in tests)
    assert any(saved[k] != pytest.approx(final_metrics[k], abs=1e-6) for k in tests)

    # predictions.parquet: the best checkpoint's classes and probabilities
    preds = pd.read_parquet(run / "predictions.parquet").set_index("id").sort_index()
    assert preds["pred"].tolist() == best_preds["pred"].tolist()
    assert (preds[PROBS] - best_preds[PROBS]).abs().to_numpy().max() < 1e-3
    assert (preds[PROBS] - final_preds[PROBS]).abs().to_numpy().max() > 0.05

    # model/: the best checkpoint's weights, tensor for tensor
    exported = AutoModelForSequenceClassification.from_pretrained(run / "model").state_dict()
    weights, ending = state_dict(best), state_dict(final)
    assert weights.keys() == exported.keys()
    assert all(torch.equal(exported[k], weights[k]) for k in weights)
    assert not all(torch.equal(exported[k], ending[k]) for k in ending)
