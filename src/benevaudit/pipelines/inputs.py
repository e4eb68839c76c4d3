"""Every value and file a user passes, checked before any model work.

An entrypoint calls :func:`check_inputs` first thing in ``run(cfg)``. Numbers are held to their
valid range (``optim.lr=-1``, ``trainer.max_epochs=0``), and files are opened and read as what
they should be (a text file named ``.ckpt``, a truncated lexicon, a label sheet without its
columns) by the per-format readers of :mod:`benevaudit.files`. A failure is one :class:`~benevaudit.errors.ConfigError` or
:class:`~benevaudit.errors.InputError` naming the input and what was expected, which
``pipelines.cli.guarded`` prints as one line with exit code 2. Checks that need the corpus
(label ids, a held-out generator) run in the pipeline right after it is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from benevaudit.audit.attribution.suite import check_attribution
from benevaudit.audit.checkpoints import locate
from benevaudit.audit.interventions import steps_from_config
from benevaudit.audit.interventions.registry import build
from benevaudit.audit.lexicon import load_lexicon
from benevaudit.errors import ConfigError
from benevaudit.files import check_located, check_torch_file
from benevaudit.generation.producers import check_planted_cues
from benevaudit.schema import SPLITS

_ABSENT = object()


@dataclass(frozen=True)
class Bound:
    """The valid values of one number: its kind, a closed or open range, and whether null is ok."""

    kind: type = float           # int or float
    low: float | None = None
    high: float | None = None
    low_open: bool = False       # low < x instead of low <= x
    high_open: bool = False
    null: bool = False

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        if self.kind is int and self.high is None and self.low in (0, 1):
            what = "a positive integer" if self.low == 1 else "a non-negative integer"
        elif self.low is not None and self.high is not None:
            what += (f" in {'(' if self.low_open else '['}{self.low:g}, "
                     f"{self.high:g}{')' if self.high_open else ']'}")
        elif self.low is not None:
            what += f" {'>' if self.low_open else '>='} {self.low:g}"
        elif self.high is not None:
            what += f" {'<' if self.high_open else '<='} {self.high:g}"
        return what + (" or null" if self.null else "")

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.null
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)


def integer(low: float | None = None, high: float | None = None, null: bool = False) -> Bound:
    """An integer in [low, high]; null allowed when ``null``."""
    return Bound(int, low, high, null=null)


POSITIVE = Bound(float, 0, low_open=True)
FRACTION = Bound(float, 0, 1)
SEQUENCE = Bound(int, 3, 512)   # tokens incl. [CLS]/[SEP]; BERT-family position embeddings

MODEL = {"seed": integer(0), "model.max_length": SEQUENCE, "model.head_tokens": integer(0)}
DATA = {"data.size": integer(3), "data.seed": integer(0), "data.signal": FRACTION}
LOADER = {"loader.batch_size": integer(1), "loader.eval_batch_size": integer(1),
          "loader.num_workers": integer(0)}
ATTRIBUTION = {"attribution.faithfulness_dialogues": integer(0, null=True),
               "attribution.heatmap_dialogues": integer(0),
               "attribution.heatmap_png_dialogues": integer(0),
               "attribution.shift_max_train": integer(1, null=True)}
NUMBERS: dict[str, dict[str, Bound]] = {
    "train": {**MODEL, **DATA, **LOADER, **ATTRIBUTION,
              "optim.lr": POSITIVE, "optim.weight_decay": Bound(float, 0),
              "optim.warmup_ratio": Bound(float, 0, 1, high_open=True),
              "trainer.max_epochs": integer(1), "trainer.accumulate_grad_batches": integer(1),
              "trainer.gradient_clip_val": Bound(float, 0, null=True),
              "trainer.val_check_interval": POSITIVE, "trainer.log_every_n_steps": integer(1),
              "callbacks.early_stopping.patience": integer(0)},
    "evaluate": {**MODEL, **DATA, **LOADER},
    "attribute": {**MODEL, **DATA, **ATTRIBUTION},
    "analyze": {**DATA, "seed": integer(0), "mtld.threshold": Bound(float, 0, 1, True, True),
                "self_bleu.n_seeds": integer(1), "self_bleu.pool_size": integer(2),
                "self_bleu.n_hypotheses": integer(1), "self_bleu.n_references": integer(1),
                "self_bleu.max_words": integer(1), "vendi.max_per_cell": integer(1),
                "vendi.batch_size": integer(1), "vendi.max_length": SEQUENCE,
                "annotation.n_per_class": integer(1)},
}


def value_at(cfg: DictConfig, key: str) -> Any:
    """The resolved value at a dotted key, or ``_ABSENT`` when this config has no such key."""
    node: Any = cfg
    for part in key.split("."):
        if not OmegaConf.is_dict(node) or part not in node:
            return _ABSENT
        if OmegaConf.is_missing(node, part):
            return _ABSENT
        node = node[part]
    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node


def check_numbers(cfg: DictConfig, bounds: dict[str, Bound]) -> None:
    for key, bound in bounds.items():
        value = value_at(cfg, key)
        if value is not _ABSENT and not bound.accepts(value):
            raise ConfigError(f"{key}={value!r}: expected {bound.describe()}")


def check_lexicon_and_intervention(cfg: DictConfig) -> None:
    """``lexicon.path`` read in full; ``intervention=`` built with it (names, parameters, and a
    lexicon for the lexicon-driven steps), so a bad one fails before the data is touched."""
    path = value_at(cfg, "lexicon.path")
    lexicon = load_lexicon(path) if path not in (_ABSENT, None) else None
    node = value_at(cfg, "intervention")
    for name, params in steps_from_config(node) if node not in (_ABSENT, None) else []:
        build(name, params, lexicon)


def check_data(cfg: DictConfig) -> None:
    cues = value_at(cfg, "data.planted_cues")
    if cues is not _ABSENT:
        check_planted_cues(cues, "data.planted_cues")
    if value_at(cfg, "data.kind") != "corpus":
        return
    path = value_at(cfg, "data.path")
    if path in (_ABSENT, None, ""):
        raise ConfigError("data.path is required with data=corpus: data.path=<a .jsonl, "
                          ".jsonl.gz or .parquet file, or a directory of shards>")
    if not Path(str(path)).expanduser().exists():
        raise ConfigError(f"data.path={path}: no such file or directory (expected a .jsonl, "
                          ".jsonl.gz or .parquet corpus, or a directory of shards)")


def check_split(cfg: DictConfig) -> None:
    ratios = value_at(cfg, "split.ratios")
    if ratios is _ABSENT:
        return
    ok = (isinstance(ratios, list) and len(ratios) == 3
          and all(FRACTION.accepts(r) for r in ratios) and sum(ratios) > 0)
    if not ok:
        raise ConfigError(f"split.ratios={ratios!r}: expected three numbers in [0, 1] for "
                          "train, validation and test, e.g. [0.8, 0.1, 0.1]")
    head, length = value_at(cfg, "model.head_tokens"), value_at(cfg, "model.max_length")
    if isinstance(head, int) and isinstance(length, int) and head > length - 2:
        raise ConfigError(f"model.head_tokens={head}: expected at most model.max_length - 2 = "
                          f"{length - 2} (the head kept of a long dialogue)")


def check_checkpoint(cfg: DictConfig) -> None:
    """``ckpt=`` for evaluate/attribute, ``resume=`` for train; the file is read, not trusted."""
    if OmegaConf.is_missing(cfg, "ckpt"):   # `ckpt: ???` left unset
        raise ConfigError("ckpt is required: ckpt=<a train run directory, its model/ "
                          "directory, or a .ckpt file>")
    ckpt = value_at(cfg, "ckpt")
    if ckpt is not _ABSENT:
        check_located("ckpt", locate(str(ckpt)))
    resume = value_at(cfg, "resume")
    if resume not in (_ABSENT, None, "last"):
        path = Path(str(resume))
        path = path / "checkpoints" / "last.ckpt" if path.is_dir() else path
        if not path.is_file():
            raise FileNotFoundError(f"resume={resume}: no checkpoint at {path} (expected "
                                    "\"last\" or the path of a last.ckpt)")
        check_torch_file("resume", path)


def check_inputs(cfg: DictConfig, entrypoint: str) -> None:
    """Every check for ``entrypoint``: train, evaluate, attribute or analyze (detect, probe,
    generate and report validate their typed run specs)."""
    check_numbers(cfg, NUMBERS[entrypoint])
    check_data(cfg)
    check_split(cfg)
    if entrypoint in ("evaluate", "attribute", "train"):
        check_checkpoint(cfg)
    if entrypoint in ("train", "evaluate"):
        check_lexicon_and_intervention(cfg)
    if entrypoint in ("train", "attribute"):
        check_attribution({**value_at(cfg, "attribution"), "enabled": True})
    split = value_at(cfg, "eval_split")
    if split is not _ABSENT and split not in SPLITS:
        raise ConfigError(f"eval_split={split!r}: expected one of {list(SPLITS)}")
