"""The probe interface: one ``run`` over a target that returns what the run directory holds.

A probe is built from its typed ``probe`` spec (``probes.registry.build``) and run over the
target's spec (:class:`~benevaudit.probes.spec.TargetSpec`: ``name``, ``llm``, and for CoBia's
released DAN ``company`` and ``model_company``). It asks the target, scores the replies, and hands back a
:class:`ProbeResult`; ``pipelines/probe.py`` writes that into the run directory. Files that
belong to the protocol itself (CoBia's stand-in data, the released DAN's first call, the WAVs
of FairDialogue's audio mode) are written by the probe into ``settings.run_dir`` as it goes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from benevaudit.asr.spec import AsrSpec
from benevaudit.probes.judge_validation import ValidationItem
from benevaudit.probes.spec import TargetSpec
from benevaudit.specs import Spec

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


class Probe(ABC, Generic[S]):
    """One probe kind, built from its ``probe`` spec (``S``, the kind's spec class). ``family``
    and ``kind`` are the block's ``probe.family`` and ``probe.kind`` that select it (``kind``
    None: the family has one kind); the registry finds every subclass that sets them."""

    family: str = ""
    kind: str | None = None

    def __init__(self, spec: S) -> None:
        self.spec = spec

    @abstractmethod
    def run(self, target: Target, settings: RunSettings) -> ProbeResult:
        """Ask ``target``, score its replies, and return the rows, metrics, tables, figures."""

    def inputs(self, settings: RunSettings) -> dict[str, tuple[str, list[Path]]]:
        """The data files the run will read, ``{role: (kind, files)}``, for ``inputs.json``
        (each with its sha256); asked before the run, so a run stopped midway names them."""
        return {}
