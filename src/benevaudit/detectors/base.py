"""The one detector interface: score input units, keep every unit's score, decide per dialogue.

A detector sees *units* cut from a dialogue (one agent turn, the exchange that ends in it, or
the turn with its whole prior context; judges see the whole dialogue). It scores each unit, and
the dialogue decision ``flagged`` is an aggregation of the unit flags (the study's rule: any
turn). Unit scores are kept so a dialogue can be re-aggregated later without the model.

A unit whose verdict cannot be read is *invalid*: its flag is ``None``, its raw reply is kept,
and it is never mapped to a class. A run's ``predictions.parquet`` holds one row per dialogue
(``predictions_frame``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from benevaudit.detectors.units import Aggregation, Unit, UnitKind, aggregate, make_units
from benevaudit.schema import CLASSES, Dialogue


@dataclass(frozen=True)
class Checkpoint:
    """A ``ckpt=`` argument and how to read it: ``locate`` gives (weights, training run directory
    or None), ``load`` gives (model, tokenizer) from the weights."""

    path: str
    locate: Callable[[str], tuple[Path, Path | None]]
    load: Callable[[Path], tuple[Any, Any]]


@dataclass(frozen=True)
class UnitVerdict:
    """One unit's reading: a score in [0, 1] (NaN when invalid), a flag, and the raw reply.

    ``probs`` holds class probabilities ``{N, OB, BB}`` for judges, empty otherwise;
    ``categories`` what a guard said it found (Llama Guard's ``S10``, Qwen3Guard's ``PII``).
    """

    score: float
    flag: bool | None
    raw: str | None = None
    probs: dict[str, float] = field(default_factory=dict)
    categories: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.flag is not None

    @staticmethod
    def invalid(raw: str) -> UnitVerdict:
        return UnitVerdict(math.nan, None, raw)


@dataclass
class DialogueResult:
    """A dialogue's decision and everything needed to recompute it."""

    id: str
    flagged: bool | None
    unit_scores: list[float]
    unit_flags: list[bool | None]
    unit_turns: list[int]
    invalid_raw: list[str]
    pred: str | None = None
    probs: dict[str, float] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    unit_categories: list[list[str]] | None = None  # guards that name categories, else None
    unit_raw: list[str] | None = None  # every unit's reply ("" for none) where a guard writes them

    @property
    def n_invalid_units(self) -> int:
        return sum(f is None for f in self.unit_flags)

    @property
    def first_hit(self) -> int:
        """Turn index of the first flagged unit, -1 when none was flagged."""
        return next((t for t, f in zip(self.unit_turns, self.unit_flags) if f), -1)


class Detector(ABC):
    """Scores units and aggregates them.

    Attributes:
        name: the config name (``regard``, ``judge_operational``, ...).
        unit: ``utterance`` | ``exchange`` | ``context`` | ``dialogue``.
        aggregation: ``any`` | ``max`` | ``mean`` | ``first``.
        threshold: the score above which ``max``/``mean`` flag a dialogue.
        categories: whether verdicts name what was found (guards with a category list).
        replies: whether units are read from written replies, each kept as ``unit_raw``.
    """

    name: str = "detector"
    unit: UnitKind = "utterance"
    aggregation: Aggregation = "any"
    threshold: float = 0.5
    categories: bool = False  # whether verdicts name categories (kept per unit)
    replies: bool = False     # whether units get written replies (kept per unit)

    @abstractmethod
    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        """One verdict per unit, in order. Units of one dialogue arrive together, in turn order
        (backends that reuse a shared prefix rely on it)."""

    def detect(self, dialogues: Sequence[Dialogue], progress: bool = False,
               batch_dialogues: int = 8) -> list[DialogueResult]:
        """Score every unit of every dialogue and decide each dialogue."""
        out: list[DialogueResult] = []
        bar = tqdm(total=len(dialogues), desc=f"detect {self.name}", disable=not progress,
                   unit="dialogue")
        for start in range(0, len(dialogues), batch_dialogues):
            chunk = dialogues[start:start + batch_dialogues]
            units = [make_units(d, self.unit) for d in chunk]
            flat = [u for us in units for u in us]
            verdicts = iter(self.score_units(flat))
            for d, us in zip(chunk, units, strict=True):
                out.append(self.decide(d, us, [next(verdicts) for _ in us]))
            bar.update(len(chunk))
        bar.close()
        return out

    def decide(self, dialogue: Dialogue, units: Sequence[Unit],
               verdicts: Sequence[UnitVerdict]) -> DialogueResult:
        """Aggregate unit verdicts; judges (one unit carrying class probabilities) add ``pred``."""
        flags = [v.flag for v in verdicts]
        scores = [v.score for v in verdicts]
        result = DialogueResult(
            id=dialogue.id,
            flagged=aggregate(flags, scores, self.aggregation, self.threshold),
            unit_scores=scores, unit_flags=flags, unit_turns=[u.turn for u in units],
            invalid_raw=[v.raw or "" for v in verdicts if not v.valid],
            unit_categories=[list(v.categories) for v in verdicts] if self.categories else None,
            unit_raw=[v.raw or "" for v in verdicts] if self.replies else None)
        if len(verdicts) == 1 and verdicts[0].probs:
            result.probs = dict(verdicts[0].probs)
            if verdicts[0].valid:
                result.pred = max(CLASSES, key=lambda c: result.probs.get(c, 0.0))
        return result

    def predictions(self, dialogues: Sequence[Dialogue], progress: bool = False) -> pd.DataFrame:
        """``predictions.parquet``'s rows: one per dialogue, as ``predictions_frame`` writes."""
        return predictions_frame(dialogues, self.detect(dialogues, progress=progress), self.name)

    def close(self) -> None:
        """Release models; a no-op where there is nothing to release."""


def triplet_id(d: Dialogue) -> str:
    """A readable key shared by the N/OB/BB dialogues of one condition (see ``splits``)."""
    user = "/".join(str(v) for v in d.user.values())
    agent = "none" if d.agent is None else "/".join(str(v) for v in d.agent.values())
    return f"{d.role}|{d.generator}|{user}|{agent}"


def predictions_frame(dialogues: Sequence[Dialogue], results: Sequence[DialogueResult],
                      detector: str) -> pd.DataFrame:
    """One row per dialogue: decision, three-way prediction, unit scores and conditions."""
    rows = []
    for d, r in zip(dialogues, results, strict=True):
        if d.id != r.id:
            raise RuntimeError(f"detector results out of order: {r.id!r} for dialogue {d.id!r}")
        row: dict[str, Any] = {"id": d.id, "label": d.label, "flagged": r.flagged,
                               "pred": r.pred, "detector": detector}
        row.update({f"prob_{c}": r.probs.get(c, math.nan) for c in CLASSES})
        row.update({"n_units": len(r.unit_flags), "n_invalid_units": r.n_invalid_units,
                    "first_hit": r.first_hit, "unit_turns": r.unit_turns,
                    "unit_scores": [float(s) for s in r.unit_scores],
                    "unit_flags": r.unit_flags, "invalid_raw": r.invalid_raw})
        row.update({"role": d.role, "generator": d.generator,
                    **{f"user_{k}": v for k, v in d.user.items()},
                    "agent": None if d.agent is None else "/".join(d.agent.values()),
                    "triplet": triplet_id(d)})
        if "stratum" in d.meta:    # a gold set's own taxonomy (EDOS's vector, DiaSafety's split)
            row["stratum"] = str(d.meta["stratum"])
        if r.unit_raw is not None:
            row["unit_raw"] = r.unit_raw
        if r.unit_categories is not None:
            row["unit_categories"] = r.unit_categories
            row["categories"] = sorted({c for cs in r.unit_categories for c in cs})
        row.update(r.extra)
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["flagged"] = frame["flagged"].astype("boolean")
    return frame
