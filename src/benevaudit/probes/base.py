"""The probe interface: ``run`` over a target (collect, judge, score) returns what the run
directory holds; ``rescore`` judges and scores the replies of an earlier run instead.

A probe is built from its typed ``probe`` spec (``probes.registry.build``) and run over the
target's spec (:class:`~benevaudit.probes.spec.TargetSpec`: ``name``, ``llm``, and for CoBia's
released DAN ``company`` and ``model_company``). It asks the target, scores the replies, and hands back a
:class:`ProbeResult`; ``pipelines/probe.py`` writes that into the run directory. Files that
belong to the protocol itself (CoBia's stand-in data, the released DAN's first call) are
written by the probe into ``settings.run_dir`` as it goes; FairDialogue's spoken stimuli come back
in the result (``stimuli``) and are written with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from benevaudit.asr.spec import AsrSpec
from benevaudit.errors import ConfigError
from benevaudit.probes.judge_validation import ValidationItem
from benevaudit.probes.models import Models
from benevaudit.probes.spec import TargetSpec
from benevaudit.specs import Spec

if TYPE_CHECKING:      # a type only: the result carries what one family's probe made
    from benevaudit.probes.fairdialogue.stimuli import Stimuli

Target = TargetSpec              # the model under test: name, llm, company, model_company
S = TypeVar("S", bound=Spec)


@dataclass(frozen=True)
class RunSettings:
    """What every probe takes from the entrypoint besides its own block and the target."""

    run_dir: Path
    seed: int
    limit: int | None = None          # the first N items (CoBia) or N scenarios per task
    progress: bool = False
    llm_cache: str | None = None      # the request cache's SQLite path; None: no cache
    asr: AsrSpec | None = None        # transcribes spoken replies (``asr``); None: none
    # labelled items the probe's judges are checked on (``probe.judge_validation``); (): none
    validation: tuple[ValidationItem, ...] = ()


@dataclass
class ProbeResult:
    """A probe's outputs, by the file each one becomes in the run directory."""

    rows: list[dict[str, Any]]                    # responses.parquet: one row per request
    metrics: dict[str, float]                     # metrics.json
    tables: dict[str, str] = field(default_factory=dict)    # file name -> text (table.csv, .md)
    # file name -> the painter that draws it at the path it is given
    figures: dict[str, Callable[[Path], Any]] = field(default_factory=dict)
    # audio mode's spoken stimuli (FairDialogue): audio/ (benevaudit.outputs.stimuli)
    stimuli: Stimuli | None = None
    # what the run settled as it ran, which its config cannot say (run.json's ``ran``): the
    # invented stand-in read in place of a release, replies read in place of the target's
    ran: dict[str, Any] = field(default_factory=dict)


@dataclass
class Collected:
    """The target's replies, collected: the rows of ``responses.parquet`` (verdicts added by
    ``judge``), the probe's plan (what it read and checked before any model loaded), and what
    judging gave besides the rows' verdicts (``judged``: e.g. the judges' checks on labelled
    items)."""

    rows: list[dict[str, Any]]
    plan: Any
    target: Target
    judged: Any = None
    # the verdicts came with the replies (an Inspect log's scorer): nothing left to judge
    verdicts_given: bool = False


class Probe(ABC, Generic[S]):
    """One probe kind, built from its ``probe`` spec (``S``, the kind's spec class). ``family``
    and ``kind`` are the block's ``probe.family`` and ``probe.kind`` that select it (``kind``
    None: the family has one kind); the registry finds every subclass that sets them.

    A run is three steps: ``collect`` the target's replies, ``judge`` them (add each judge's
    verdicts to the rows), ``score`` them (metrics, tables, figures). ``rescore`` runs the last
    two over the replies a run saved (``recollect``), loading no target. ``judge_keys`` are the
    keys of the probe block that set its judges: a rescore takes them from the current config
    and every other key from the recorded run."""

    family: str = ""
    kind: str | None = None
    judge_keys: tuple[str, ...] = ()

    def __init__(self, spec: S) -> None:
        self.spec = spec

    def run(self, target: Target, settings: RunSettings) -> ProbeResult:
        """Ask ``target``, judge and score its replies: the rows, metrics, tables, figures.
        Target and judges share one model per distinct ``llm`` block, closed at the end."""
        return self._judged(lambda models: self.collect(target, settings, models), settings)

    def rescore(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                ) -> ProbeResult:
        """Judge and score the replies a run saved (``rows``, its ``responses.parquet``) with
        this probe's judges; ``target`` names what answered, and is never loaded."""
        return self._judged(lambda _: self.recollect(rows, target, settings), settings)

    def _judged(self, gather: Callable[[Models], Collected], settings: RunSettings
                ) -> ProbeResult:
        """``gather``'s replies judged and scored, the models they share closed at the end."""
        models = Models(settings.llm_cache)
        try:
            collected = gather(models)
            self.judge(collected, settings, models)
        finally:
            models.close()
        return self.score(collected, settings)

    @abstractmethod
    def collect(self, target: Target, settings: RunSettings, models: Models) -> Collected:
        """The target's replies, one row per request (``models.get`` loads a model)."""

    def recollect(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                  ) -> Collected:
        """The saved rows as ``collect`` would give them, their verdicts dropped."""
        raise ConfigError(f"rescore= re-judges cobia and fairmt runs; probe {self.family}"
                          f"{'/' + self.kind if self.kind else ''} has no judge to rerun")

    def judge(self, collected: Collected, settings: RunSettings, models: Models) -> None:
        """Add the judges' verdicts to ``collected.rows`` (a probe with no judge: nothing)."""

    @abstractmethod
    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        """The metrics, tables and figures of judged rows."""

    def inputs(self, settings: RunSettings) -> dict[str, tuple[str, list[Path]]]:
        """The data files the run will read, ``{role: (kind, files)}``, for ``inputs.json``
        (each with its sha256); asked before the run, so a run stopped midway names them."""
        return {}
