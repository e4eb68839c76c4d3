"""What evaluate.py and attribute.py share: a saved classifier, the data it meets, and where
and how it runs. The training run it came from is read back through :class:`TrainedOn`."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Optional, TypeVar

from omegaconf import DictConfig, OmegaConf
from pydantic import model_validator

from benevaudit.audit.checkpoints import load_frozen, locate
from benevaudit.audit.spec import TrainerSpec, check_ckpt
from benevaudit.encoders.models import set_offline_defaults
from benevaudit.encoders.spec import ModelSpec
from benevaudit.errors import ConfigError, InputError
from benevaudit.generation.embedded import load_dialogues
from benevaudit.generation.spec import DataSpec
from benevaudit.pipelines.config import adopt, output_dir, validated
from benevaudit.precision import resolve_precision, torch_device
from benevaudit.gold import is_gold
from benevaudit.schema import SPLITS, Dialogue
from benevaudit.specs import NonNegativeInt, RunSpec, Spec
from benevaudit.splits import SplitSpec, apply_split, by_split

log = logging.getLogger(__name__)
F = TypeVar("F", bound="FrozenRun")
ADOPTED = ("seed", "data", "split", "model")    # what a training run may set (``adopted``)


class FrozenRun(RunSpec):
    """The keys of evaluate.py and attribute.py: a saved classifier and the data it meets."""

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


class TrainedOn(Spec):
    """What a train run's ``.hydra/config.yaml`` says about the data its model met: the
    blocks train.py reads (:class:`benevaudit.pipelines.train.TrainRun`), checked by the same
    specs. Other keys of the file are not read, so a run written before a key of theirs was
    added or dropped still gives its data, split and sequence settings."""

    seed: NonNegativeInt
    data: DataSpec
    split: SplitSpec
    model: ModelSpec

    @classmethod
    def read(cls, saved: Path) -> TrainedOn:
        loaded = OmegaConf.to_container(OmegaConf.load(saved), resolve=False)
        if not isinstance(loaded, dict):
            raise InputError(f"{saved}: expected the training run's config (a mapping)")
        try:
            return cls.of({k: loaded.get(k) for k in cls.model_fields})
        except ConfigError as e:
            raise InputError(f"{saved}: {e}") from None


def adopted(spec: F, run: Path | None) -> F:
    """``spec`` with its training run's data, split, seed and sequence settings, where
    ``reuse_run_data`` asks for them and the run directory has its config. A gold set given as
    ``data`` is what the classifier meets (a transfer test): only the sequence settings are
    taken from the training run."""
    saved = run / ".hydra" / "config.yaml" if run is not None else None
    if saved is None or not spec.reuse_run_data or not saved.is_file():
        return spec
    trained = TrainedOn.read(saved)
    model = spec.model.model_copy(update={"max_length": trained.model.max_length,
                                          "head_tokens": trained.model.head_tokens})
    if is_gold(spec.data):
        log.info("scoring %s; sequence settings of the training run %s", spec.data.kind, run)
        return spec.model_copy(update={"model": model})
    log.info("reusing data/split/seed of the training run %s", run)
    return spec.model_copy(update={"seed": trained.seed, "data": trained.data,
                                   "split": trained.split, "model": model})


def changed(composed: FrozenRun, ran: FrozenRun) -> dict[str, Any]:
    """The blocks of :data:`ADOPTED` that ``ran`` holds otherwise than ``composed``, as plain
    values (what ``run.json`` records in their place)."""
    out = {}
    for key in ADOPTED:
        value = getattr(ran, key)
        if value != getattr(composed, key):
            out[key] = value.model_dump(mode="json") if isinstance(value, Spec) else value
    return out


def gold_splits(dialogues: list[Dialogue], split: SplitSpec, wanted: str
                ) -> dict[str, list[Dialogue]]:
    """A gold set met by a trained classifier: its own ``wanted`` split where
    ``split.strategy=existing`` (EDOS's test split, for the in-domain reference), else every
    item, all under ``wanted``; the other splits are empty."""
    if split.strategy == "existing":
        pool = [d for d in dialogues if d.split == wanted]
        if not pool:
            raise ConfigError(f"split.strategy=existing: the gold set has no '{wanted}' items")
    else:
        pool = [dataclasses.replace(d, split=wanted) for d in dialogues]
    return {s: pool if s == wanted else [] for s in SPLITS}


@dataclass(frozen=True)
class Frozen(Generic[F]):
    spec: F                               # the entrypoint's run spec, its training run adopted
    device: str
    precision: str                        # the trainer's, resolved for this machine
    out: Path
    splits: dict[str, list[Dialogue]]
    model: Any
    tokenizer: Any
    weights: Path
    run: Path | None = None               # the training run directory, where found


def open_frozen(run_spec: type[F], cfg: DictConfig, wanted: str = "test") -> Frozen[F]:
    """Every file and number checked before any model work; then the run directory, the
    classifier ``ckpt`` names (on the trainer's device) and the split dialogues of its
    training run, or of the gold set given as ``data`` (its ``wanted`` split)."""
    set_offline_defaults()
    spec = validated(run_spec, cfg)
    # the run's machine settings: the model runs where and how the trainer config says
    device = torch_device(spec.trainer.accelerator)
    precision = resolve_precision(spec.trainer.precision, spec.trainer.accelerator)
    out = output_dir(cfg)
    weights, train_run = locate(str(spec.ckpt))
    composed, spec = spec, adopted(spec, train_run)
    if train_run is not None:
        adopt(out, train_run, changed(composed, spec))
    dialogues = load_dialogues(spec.data, cfg.paths.cache_dir)
    splits = (gold_splits(dialogues, spec.split, wanted) if is_gold(spec.data)
              else by_split(apply_split(dialogues, spec.split, spec.seed)))
    model, tokenizer = load_frozen(weights)
    return Frozen(spec, device, precision, out, splits, model.to(device), tokenizer, weights,
                  train_run)
