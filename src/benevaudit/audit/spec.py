"""The fine-tuning audit's blocks: ``loader``, ``optim``, ``trainer``, ``callbacks``, the
``intervention`` with its ``lexicon``, and the checkpoints a run reads (``ckpt``, ``resume``)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, field_validator, model_validator
from typing_extensions import Self

from benevaudit.audit.checkpoints import locate
from benevaudit.audit.interventions.base import Intervention
from benevaudit.audit.interventions.steps import StepParams, build_steps, typed_steps
from benevaudit.audit.lexicon import Lexicon, load_lexicon
from benevaudit.files import check_located, check_torch_file
from benevaudit.specs import NonNegative, NonNegativeInt, Positive, PositiveInt, Spec


class LoaderSpec(Spec):
    batch_size: PositiveInt        # x trainer.accumulate_grad_batches = the effective batch
    eval_batch_size: PositiveInt
    num_workers: NonNegativeInt
    group_by_length: bool


class OptimSpec(Spec):
    lr: Positive
    weight_decay: NonNegative
    warmup_ratio: Annotated[float, Field(ge=0, lt=1)]


DEVICES = ("a count, auto (or -1: every device), a list of device indices, or indices as a "
           "string \"0,1\"")


class TrainerSpec(Spec):
    """The Lightning ``Trainer`` options a ``trainer`` option may set, each passed on as is."""

    accelerator: str
    devices: Annotated[Union[PositiveInt, Literal["auto", -1], list[NonNegativeInt],
                             Annotated[str, Field(pattern=r"^\d+(,\d+)*,?$")]],
                       Field(description=DEVICES)]
    num_nodes: PositiveInt
    strategy: str
    precision: Annotated[Union[str, int], Field(description="auto, 32-true, bf16-mixed, "
                                                             "16-mixed, or 32/16")]
    max_epochs: PositiveInt
    accumulate_grad_batches: PositiveInt
    gradient_clip_val: Optional[NonNegative]
    val_check_interval: Positive
    log_every_n_steps: PositiveInt
    deterministic: bool
    num_sanity_val_steps: Annotated[int, Field(ge=-1)]
    enable_progress_bar: bool
    # a quick run's cap (``+trainer.limit_train_batches=4``): a count or a share of the batches
    limit_train_batches: Optional[Union[PositiveInt, Positive]] = None
    limit_val_batches: Optional[Union[NonNegativeInt, NonNegative]] = None

    def lightning_options(self) -> dict[str, Any]:
        """The options as Lightning's ``Trainer`` takes them, each passed on as is; a quick
        run's caps stay absent unless given."""
        return self.model_dump(exclude_unset=True)


class CheckpointSpec(Spec):
    """Lightning's ``ModelCheckpoint``: which metric picks the best checkpoint."""

    monitor: str
    mode: Literal["max", "min"]
    save_top_k: Annotated[int, Field(ge=-1)]
    save_last: bool


class EarlyStoppingSpec(Spec):
    monitor: str
    mode: Literal["max", "min"]
    patience: NonNegativeInt       # counts validation checks, not epochs
    min_delta: NonNegative


class HeapSpec(Spec):
    """``callbacks.heap``: on a CPU fit, freed memory kept in the heap up to ``trim_mib`` of it
    (``audit/heap.py``)."""

    trim_mib: PositiveInt


class CallbacksSpec(Spec):
    checkpoint: CheckpointSpec
    early_stopping: Optional[EarlyStoppingSpec]
    heap: Optional[HeapSpec]


class InterventionSpec(Spec):
    """``intervention=<name>``: the steps applied to the dialogues, each step's parameters
    typed (``audit/interventions/steps.py``), in the order applied."""

    name: str
    code: str                      # the short code of tables (P+M)
    steps: dict[str, Optional[StepParams]]   # each step's typed parameters, in the order applied

    @field_validator("steps", mode="before")
    @classmethod
    def typed(cls, steps: Any) -> Any:
        return typed_steps(steps)

    def build(self, lexicon: Lexicon | None) -> list[Intervention]:
        """The interventions that run, built once: a missing lexicon fails here."""
        return build_steps({k: v for k, v in self.steps.items() if v is not None}, lexicon)


class LexiconSpec(Spec):
    path: Optional[str] = None     # a training run's cue_lexicon.json

    def read(self) -> Lexicon | None:
        """The cue lexicon, read (a run reads it once: ``EditsRun.interventions``)."""
        return load_lexicon(self.path) if self.path else None


class EditsRun(Spec):
    """A run that edits dialogues: its ``intervention`` and the ``lexicon`` it reads. The
    interventions are built when the run is validated, so a bad parameter or a missing
    lexicon fails before any data is read, and the same ones edit every split."""

    intervention: InterventionSpec
    lexicon: LexiconSpec

    @cached_property
    def interventions(self) -> list[Intervention]:
        return self.intervention.build(self.lexicon.read())

    @model_validator(mode="after")
    def edits_built(self) -> Self:
        self.interventions   # noqa: B018  (built now, kept for the run)
        return self


def check_ckpt(ckpt: str | None) -> None:
    """``ckpt=``: a train run directory, its model/ directory, or a .ckpt file, read."""
    if ckpt not in (None, ""):
        check_located("ckpt", locate(str(ckpt)))


def check_resume(resume: str | None) -> None:
    """``resume=``: ``last`` (this run directory's), or a last.ckpt (or its run directory)."""
    if resume in (None, "last"):
        return
    path = Path(str(resume))
    path = path / "checkpoints" / "last.ckpt" if path.is_dir() else path
    if not path.is_file():
        raise FileNotFoundError(f"resume={resume}: no checkpoint at {path} (expected \"last\" "
                                "or the path of a last.ckpt)")
    check_torch_file("resume", path)
