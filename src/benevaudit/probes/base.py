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
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_args

from benevaudit.asr.spec import AsrSpec
from benevaudit.errors import ConfigError
from benevaudit.probes.judge_validation import ValidationItem
from benevaudit.probes.models import Models
from benevaudit.probes.spec import TargetSpec
from benevaudit.registry import Registry
from benevaudit.specs import Spec

if TYPE_CHECKING:      # a type only: the result carries what one family's probe made
    from benevaudit.probes.fairdialogue.stimuli import Stimuli

Target = TargetSpec              # the model under test: name, llm, company, model_company
S = TypeVar("S", bound=Spec)
# ``family`` (or ``family/kind``) -> the probe class, registered by its class statement
PROBES: Registry[type[Probe[Any]]] = Registry("probe", "benevaudit.probes", tag="family")


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
    # the folder the probe's invented stand-in was written to (``Probe.stand_in``); None: none
    stand_in: Path | None = None


@dataclass(frozen=True)
class StandIn:
    """A probe's invented stand-in for its release: the folder of the run directory it is
    written to, and its files (path in the release's layout -> text)."""

    folder: str
    files: dict[str, str]


@dataclass
class ProbeResult:
    """A probe's outputs, by the file each one becomes in the run directory."""

    rows: list[dict[str, Any]]                    # responses.parquet: one row per request
    metrics: dict[str, float]                     # metrics.json
    tables: dict[str, str] = field(default_factory=dict)    # file name -> text (table.csv, .md)
    # file name -> the painter that draws it: the PNG's bytes, rendered when the run is written
    figures: dict[str, Callable[[], bytes]] = field(default_factory=dict)
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
    # what collecting made besides the rows, by the file it becomes (CoBia's DAN first call)
    files: dict[str, str] = field(default_factory=dict)


class Probe(ABC, Generic[S]):
    """One probe kind, built from its ``probe`` spec (``S``, the kind's spec class). ``family``
    and ``kind`` are the block's ``probe.family`` and ``probe.kind`` that select it (``kind``
    None: the family has one kind); the registry finds every subclass that sets them.

    A run is three steps: ``collect`` the target's replies, ``judge`` them (add each judge's
    verdicts to the rows), ``score`` them (metrics, tables, figures). ``rescore`` runs the last
    two over the replies a run saved (``recollect``), loading no target. ``judge_keys`` are the
    keys of the probe block that set its judges, or its scoring where it has no judge: a
    rescore takes them from the current config and every other key from the recorded run."""

    family: str = ""
    kind: str | None = None
    judge_keys: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that sets ``family`` registers itself, with its spec (the ``S`` of its
        ``Probe[S]`` base), as the kind ``family`` or ``family/kind``."""
        super().__init_subclass__(**kwargs)
        if "family" in vars(cls) and cls.family:
            specs = [a for base in vars(cls).get("__orig_bases__", ()) for a in get_args(base)
                     if isinstance(a, type) and issubclass(a, Spec)]
            key = cls.family if cls.kind is None else f"{cls.family}/{cls.kind}"
            PROBES.add(key, specs[0] if specs else None, cls, origin=cls.__module__)

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
        raise ConfigError(f"rescore= re-scores cobia, fairmt and fairdialogue decision and "
                          f"recommendation runs; probe {self.family}"
                          f"{'/' + self.kind if self.kind else ''} scores what only a live "
                          "run makes")

    def judge(self, collected: Collected, settings: RunSettings, models: Models) -> None:
        """Add the judges' verdicts to ``collected.rows`` (a probe with no judge: nothing)."""

    @abstractmethod
    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        """The metrics, tables and figures of judged rows."""

    def inputs(self, settings: RunSettings) -> dict[str, tuple[str, list[Path]]]:
        """The data files the run will read, ``{role: (kind, files)}``, for ``inputs.json``
        (each with its sha256); asked before the run, so a run stopped midway names them."""
        return {}

    def stand_in(self) -> StandIn | None:
        """The invented stand-in the run reads where the block names no release (written into
        the run directory before the probe plans, as ``RunSettings.stand_in``); None: the
        probe reads a release, or has none."""
        return None
