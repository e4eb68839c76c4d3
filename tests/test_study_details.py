"""The study's training details that a run must keep: the effective batch under DDP, the
warm-up-cosine schedule, the unweighted loss, early stopping's patience, and interventions that
never touch the test split."""

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir

from benevaudit.audit.module import DialogueClassifier, warmup_cosine
from benevaudit.audit.spec import TrainerSpec
from benevaudit.errors import ConfigError
from benevaudit.generation.embedded import load_dialogues
from benevaudit.generation.spec import DataBlock
from benevaudit.pipelines import train
from benevaudit.pipelines.config import plain
from benevaudit.splits import SplitSpec, apply_split, by_split
from config_fixtures import option
from config_fixtures import smoke_train as cfg_for

CONF = Path(__file__).resolve().parents[1] / "conf"


# ---------------------------------------------------------------- effective batch under DDP


@pytest.mark.parametrize("devices, per_device", [(1, 8), (2, 4), (4, 2), (8, 1), ("0,1", 4),
                                                 ([0, 1, 2, 3], 2)])
def test_ddp_divides_the_accumulation_so_the_effective_batch_stays_128(devices, per_device):
    trainer = TrainerSpec.of({**option("trainer", "cpu"), "accumulate_grad_batches": 8,
                              "devices": devices}, "trainer")
    batch = train.split_accumulation(trainer, 16)
    assert batch["accumulate_grad_batches"] == per_device
    assert batch["effective_batch"] == 16 * per_device * batch["world_size"] == 128


def test_nodes_count_as_processes():
    trainer = TrainerSpec.of({**option("trainer", "cpu"), "accumulate_grad_batches": 8,
                              "devices": 2, "num_nodes": 2}, "trainer")
    batch = train.split_accumulation(trainer, 16)
    assert batch["world_size"] == 4 and batch["accumulate_grad_batches"] == 2


def test_a_device_count_that_does_not_divide_8_is_refused_before_any_work(tmp_path):
    cfg = cfg_for(tmp_path, "trainer=ddp", "trainer.devices=3", "trainer.accelerator=cpu",
                  "trainer.accumulate_grad_batches=8", "loader.batch_size=16")
    with pytest.raises(ConfigError) as err:
        train.run(cfg)
    message = str(err.value)
    assert "trainer.devices=3" in message and "valid device counts: 1, 2, 4, 8" in message
    assert "16 x 8 = 128" in message and "\n" not in message
    assert not (tmp_path / "cache").exists()  # refused before the corpus was read


# ---------------------------------------------------------------- schedule and loss


@pytest.mark.parametrize("step, expected", [
    (0, 1 / 6), (2, 3 / 6), (5, 1.0),            # linear warm-up over 6 steps
    (6, 1.0),                                    # cosine starts at its top
    (31, 0.5 * (1 + math.cos(math.pi / 4))),     # a quarter of the 100 decay steps: 0.853553
    (56, 0.5),                                   # half-way
    (81, 0.5 * (1 - math.cos(math.pi / 4))),     # three quarters: 0.146447
    (106, 0.0), (120, 0.0),                      # the end, and beyond it
])
def test_warmup_cosine_at_hand_computed_steps(step, expected):
    assert warmup_cosine(step, total=106, warmup=6) == pytest.approx(expected, abs=1e-9)


def tiny_module(lr: float = 2e-5) -> DialogueClassifier:
    from benevaudit.encoders.models import load_classifier

    model = load_classifier("tiny", seed=0)
    return DialogueClassifier("tiny", json.loads(model.config.to_json_string()), lr=lr,
                              model=model)


def test_the_optimiser_follows_the_schedule_with_6_percent_warmup():
    module = tiny_module(lr=2e-5)
    module._trainer = SimpleNamespace(precision="32-true", estimated_stepping_batches=106)
    conf = module.configure_optimizers()
    opt, sched = conf["optimizer"], conf["lr_scheduler"]["scheduler"]
    assert conf["lr_scheduler"]["interval"] == "step"
    lrs = []
    for _ in range(107):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    # round(0.06 x 106) = 6 warm-up steps
    assert lrs[0] == pytest.approx(2e-5 / 6) and lrs[5] == pytest.approx(2e-5)
    assert lrs[56] == pytest.approx(1e-5) and lrs[106] == pytest.approx(0.0, abs=1e-15)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0


def test_the_loss_is_unweighted_cross_entropy():
    """Three N and one BB: an unweighted loss is the plain mean of -log p(true class), not one
    that up-weights the rare class."""
    module = tiny_module()
    module.log = lambda *a, **k: None           # no Trainer to log to
    torch.manual_seed(0)
    batch = {"input_ids": torch.randint(1000, 2000, (4, 12)),
             "attention_mask": torch.ones(4, 12, dtype=torch.long),
             "labels": torch.tensor([0, 0, 0, 2])}
    module.eval()                               # no dropout: the same logits twice
    loss = module.training_step(batch, 0)
    with torch.no_grad():
        logits = module(batch["input_ids"], batch["attention_mask"]).double().numpy()
    y = batch["labels"].numpy()
    log_norm = np.log(np.exp(logits).sum(axis=1))                       # [B]
    per_example = log_norm - logits[np.arange(len(y)), y]               # -log p(y)
    assert loss.item() == pytest.approx(per_example.mean(), rel=1e-5)
    weights = np.array([1 / 3, 1.0, 1.0])[y]                            # inverse frequency
    assert abs(loss.item() - (weights * per_example).sum() / weights.sum()) > 1e-4


# ---------------------------------------------------------------- a real tiny run


@pytest.fixture(scope="module")
def plateau_run(tmp_path_factory):
    """A tiny_bert run with a learning rate of 1e-12 (validation macro-F1 cannot improve), the study's
    early stopping, and the shuffle intervention on the training side; the splits the run
    trained and tested on are kept."""
    tmp = tmp_path_factory.mktemp("plateau")
    cfg = cfg_for(tmp, "callbacks=default", "optim.lr=1e-12", "intervention=shuffle",
                  "attribution=none", "trainer.max_epochs=6")
    seen = {}
    real = train.test_best

    def capture(cfg, module, dm, tests, out, logger, precision):
        seen.update(train=list(dm.raw["train"]), validation=list(dm.raw["validation"]),
                    test=list(tests["test"]))
        return real(cfg, module, dm, tests, out, logger, precision)

    train.test_best = capture
    try:
        metrics = train.run(cfg)
    finally:
        train.test_best = real
    clean = by_split(apply_split(load_dialogues(DataBlock.read(plain(cfg.data)),
                                                cfg.paths.cache_dir),
                                 SplitSpec.of(plain(cfg.split)), int(cfg.seed)))
    return tmp / "run", metrics, seen, clean


def test_early_stopping_stops_after_3_validations_without_improvement(plateau_run):
    run, metrics, _, _ = plateau_run
    rows = list(csv.DictReader(open(run / "csv" / "metrics.csv")))
    val = [float(r["val/macro_f1"]) for r in rows if r.get("val/macro_f1")]
    assert len(set(val)) == 1       # lr 1e-12: the first validation is never beaten
    assert len(val) == 4            # the first, then 3 without improvement (patience 3)
    per_epoch = 4                   # val_check_interval 0.25
    assert len(val) < 6 * per_epoch  # stopped well before max_epochs
    assert metrics["train/effective_batch"] == 8 and metrics["train/world_size"] == 1


def _bytes(dialogues) -> bytes:
    return json.dumps([d.to_dict() for d in dialogues], sort_keys=True).encode()


def test_training_side_interventions_edit_train_and_validation_only(plateau_run):
    _, metrics, seen, clean = plateau_run
    assert metrics["intervention/steps"] == 1
    assert _bytes(seen["test"]) == _bytes(clean["test"])  # byte-identical
    for side in ("train", "validation"):
        assert [d.id for d in seen[side]] == [d.id for d in clean[side]]
        changed = sum(a.turns != b.turns for a, b in zip(seen[side], clean[side]))
        assert changed >= 0.9 * len(clean[side]), side  # shuffled: nearly every dialogue


# ---------------------------------------------------------------- dataset analysis at paper scale


def test_the_paper_scale_analysis_computes_vendi_on_bert_base_uncased(tmp_path):
    import os
    import subprocess

    from recipe_fixtures import jobs

    from benevaudit.analysis.spec import VendiSpec

    root = CONF.parent
    env = {**os.environ, "PY": "echo", "ANALYSIS_DIR": str(tmp_path / "a"), "SCALE": "paper"}
    proc = subprocess.run(["bash", "experiments/dataset_analysis/run.sh", "data.path=/c"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    analyze = next(line for line in proc.stdout.splitlines() if line.startswith("analyze.py"))
    (cfg,) = jobs(analyze.split())  # the run as Hydra composes it, the pin included
    assert cfg.data.kind == "corpus" and cfg.data.path == "/c"
    assert cfg.vendi.embedder == "bert-base-uncased"
    VendiSpec.of(plain(cfg.vendi), "vendi")  # the study's encoder is a valid choice, not a directory to find
    bad = subprocess.run(["bash", "experiments/dataset_analysis/run.sh"], cwd=root,
                         env={**env, "SCALE": "huge"}, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "SCALE=huge; valid: paper" in bad.stderr
