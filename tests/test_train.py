"""A real short training run on tiny_bert: the loss falls, contract files appear, resume works."""

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from hydra import compose, initialize_config_dir

from benevaudit.audit.module import DialogueClassifier
from benevaudit.errors import ConfigError
from benevaudit.pipelines import train
from config_fixtures import smoke_train

CONF = Path(__file__).resolve().parents[1] / "conf"


def cfg_for(tmp: Path, *overrides: str):
    return smoke_train(tmp, "callbacks=none", *overrides)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    metrics = train.run(cfg_for(tmp, "save_model=true"))
    return tmp / "run", metrics


def test_loss_falls_and_contract_files_exist(trained):
    run, metrics = trained
    rows = list(csv.DictReader(open(run / "csv" / "metrics.csv")))
    losses = [float(r["train/loss"]) for r in rows if r.get("train/loss")]
    assert len(losses) >= 40
    assert sum(losses[-6:]) / 6 < sum(losses[:6]) / 6 - 0.05
    saved = json.loads((run / "metrics.json").read_text())
    for key in ("test/macro_f1", "test/recall_N", "test/recall_OB", "test/recall_BB",
                "test/precision_BB", "test/confusion_BB_to_N", "binary/f1"):
        assert 0.0 <= saved[key] <= 1.0
    preds = pd.read_parquet(run / "predictions.parquet")
    assert len(preds) == saved["test/n"] == 9 and preds["id"].is_unique
    assert {"id", "label", "pred", "p_N", "p_OB", "p_BB"} <= set(preds.columns)
    assert (preds[["p_N", "p_OB", "p_BB"]].sum(axis=1) - 1).abs().max() < 1e-4
    assert (run / "checkpoints" / "last.ckpt").is_file() and (run / "model" / "config.json").is_file()
    assert (run / "confusion_matrix.png").stat().st_size > 1000


def test_trigger_rates_match_the_predictions(trained):
    """The fine-tuned classifier is a detector too: flagged = pred in {OB, BB}."""
    run, _ = trained
    saved = json.loads((run / "metrics.json").read_text())
    preds = pd.read_parquet(run / "predictions.parquet")
    for c in ("N", "OB", "BB"):
        rows = preds[preds["label"] == c]
        assert saved[f"trigger/TR_{c}"] == pytest.approx((rows["pred"] != "N").mean())
        low, high = saved[f"trigger/TR_{c}_ci_low"], saved[f"trigger/TR_{c}_ci_high"]
        assert low <= saved[f"trigger/TR_{c}"] <= high
    assert saved["trigger/delta_OB_BB"] == pytest.approx(
        saved["trigger/TR_OB"] - saved["trigger/TR_BB"])

def test_resume_from_last_continues_from_the_last_step_not_the_best(tmp_path, monkeypatch):
    """A step too small to move a weight keeps validation macro-F1 flat, so the best checkpoint
    stays at the first validation; ``last.ckpt`` must still be the last step (past the last
    validation: 9 batches, validated after 4 and 8), and a resumed run trains only after it."""
    flat = ("optim.lr=1.0e-12", "trainer.val_check_interval=0.5")
    first = train.run(cfg_for(tmp_path, "trainer.max_epochs=1", *flat))
    steps = int(first["train/optimizer_steps"])
    saved = tmp_path / "run" / "checkpoints"
    [best] = saved.glob("best-*.ckpt")
    step_of = lambda p: torch.load(p, map_location="cpu", weights_only=False)["global_step"]  # noqa: E731
    assert step_of(best) < steps == step_of(saved / "last.ckpt")

    calls = []
    step = DialogueClassifier.training_step
    monkeypatch.setattr(DialogueClassifier, "training_step",
                        lambda self, *a: calls.append(1) or step(self, *a))
    second = train.run(cfg_for(tmp_path, "trainer.max_epochs=2", "resume=last", *flat))
    assert second["train/optimizer_steps"] == 2 * steps
    assert len(calls) == steps   # the second epoch only, not again from the best step


def test_missing_resume_checkpoint_fails_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        train.run(cfg_for(tmp_path, "resume=/nowhere/last.ckpt"))


def compose_for(primary: str, tmp: Path, *overrides: str):
    """In-process runs write no .hydra/ into the training run, so its data and model are named."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose(primary, overrides=[
            "data=tiny", "model=tiny_bert",
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / primary}",
            f"paths.cache_dir={tmp.parent / 'cache'}", *overrides])


def test_evaluate_frozen_model_with_an_edited_test_set(trained, tmp_path):
    from benevaudit.pipelines import evaluate

    run, _ = trained
    lexicon = run / "cue_lexicon.json"
    clean = evaluate.run(compose_for("evaluate", tmp_path / "a", f"ckpt={run}"))
    masked = evaluate.run(compose_for("evaluate", tmp_path / "b", f"ckpt={run}",
                                      "intervention=punct+mask", f"lexicon.path={lexicon}"))
    assert clean["test/n"] == masked["test/n"] == 9  # the training run's own test split
    assert clean["test/macro_f1"] == pytest.approx(json.loads(
        (run / "metrics.json").read_text())["test/macro_f1"], abs=1e-6)
    assert masked["intervention/masked_words_test"] > 0
    assert {"trigger/TR_BB", "trigger/delta_OB_BB"} <= set(clean) & set(masked)
    assert "intervention/punct_replaced_test" in masked


def test_attribute_any_checkpoint(trained, tmp_path):
    from benevaudit.pipelines import attribute

    run, _ = trained
    metrics = attribute.run(compose_for("attribute", tmp_path, f"ckpt={run / 'checkpoints' / 'last.ckpt'}",
                                        "attribution.faithfulness_dialogues=0",
                                        "attribution.representation_shift=false"))
    lexicon = json.loads((tmp_path / "attribute" / "cue_lexicon.json").read_text())
    assert set(lexicon) == {"N", "OB", "BB"} and all(len(v) > 0 for v in lexicon.values())
    assert "attribution/seconds_rollout" in metrics


def test_precision_and_words_only_lexicon_in_the_run(trained):
    """metrics.json records the resolved precision; cue_lexicon.json holds words, never marks."""
    from benevaudit.audit.attribution.words import is_word
    from benevaudit.precision import precision_bits, resolve_precision

    run, _ = trained
    saved = json.loads((run / "metrics.json").read_text())
    assert saved["train/precision_bits"] == precision_bits(resolve_precision("auto", "cpu"))
    lexicon = json.loads((run / "cue_lexicon.json").read_text())
    words = [e["word"] for entries in lexicon.values() for e in entries]
    assert words and all(is_word(w) for w in words)


def test_evaluate_names_metrics_after_the_evaluated_split(trained, tmp_path):
    from benevaudit.pipelines import evaluate

    run, _ = trained
    val = evaluate.run(compose_for("evaluate", tmp_path, f"ckpt={run}", "eval_split=validation"))
    assert val["validation/n"] == 9 and 0.0 <= val["validation/macro_f1"] <= 1.0
    assert not [k for k in val if k.startswith("test/")]
    with pytest.raises(ConfigError, match="eval_split"):
        evaluate.run(compose_for("evaluate", tmp_path, f"ckpt={run}", "eval_split=dev"))


def test_a_run_without_model_dir_is_located_by_its_best_checkpoint(tmp_path):
    """experiment=smoke keeps no model/ (save_model=false): ckpt=<run> then means its best
    checkpoint, so the audit recipe's evaluation side runs on such a baseline too."""
    from benevaudit.audit.checkpoints import locate

    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "last.ckpt").write_bytes(b"")
    assert locate(str(run)) == (run / "checkpoints" / "last.ckpt", run)
    (run / "checkpoints" / "best-12.ckpt").write_bytes(b"")
    assert locate(str(run)) == (run / "checkpoints" / "best-12.ckpt", run)
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        locate(str(tmp_path))


def test_evaluate_records_the_settings_it_adopted_from_its_training_run(trained, tmp_path):
    """run.json holds what ran: the training run's seed and data, not the composed ones, and
    names the run they came from."""
    import shutil

    import yaml

    from benevaudit.pipelines import evaluate
    from benevaudit.report.record import read_record

    run = tmp_path / "train"
    shutil.copytree(trained[0], run)
    saved = json.loads((run / "run.json").read_text())["config"]
    (run / ".hydra").mkdir()                              # as a Hydra run leaves it
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(saved))
    trained_seed = saved["seed"]
    out = tmp_path / "eval"
    evaluate.run(compose_for("evaluate", out, f"ckpt={run}", f"seed={trained_seed + 7}"))
    record = read_record(out / "evaluate")
    assert record is not None and record.config["seed"] == trained_seed
    assert "seed" in record.adopted and record.adopted_from == str(run)
    assert record.config["data"]["kind"] == json.loads(
        (run / "run.json").read_text())["config"]["data"]["kind"]
