"""What every intervention is: frozen parameters, an optional corpus pass, a batch edit.

An intervention is a pure function of (input, params, seed). Its parameters are the fields of
a frozen dataclass (so a config with an unknown parameter fails, listing the valid ones). Most
edit each batch on its own; frequency normalisation and symmetric injection first need
statistics of the whole table they edit (cue frequencies per class, where cues sit in a
turn): :meth:`Intervention.measure` counts them in one batch, the runner sums the counts over
all batches (in parallel), and :meth:`Intervention.finish` turns the sums into the state that
:meth:`Intervention.apply` reads.
"""

from __future__ import annotations

import abc
import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.lexicon import Lexicon
from benevaudit.errors import ConfigError


class Edit(NamedTuple):
    batch: pa.RecordBatch
    counts: Counter  # summed over batches, reported as intervention/<name> in metrics.json


@dataclasses.dataclass(frozen=True)
class Intervention(abc.ABC):
    """Base class; subclasses add their parameters as dataclass fields and define apply()."""

    lexicon: Lexicon | None = dataclasses.field(default=None, repr=False, compare=False)

    name: ClassVar[str] = ""
    needs_lexicon: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.needs_lexicon and self.lexicon is None:
            raise ConfigError(f"intervention {self.name!r} needs a cue lexicon: pass "
                              "lexicon.path=<cue_lexicon.json> (written by `python train.py`)")

    @classmethod
    def params(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.name != "lexicon"]

    @classmethod
    def required(cls) -> list[str]:
        """The parameters without a value of their own: the YAML option gives each."""
        return [f.name for f in dataclasses.fields(cls) if f.name != "lexicon"
                and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]

    @property
    def needs_corpus(self) -> bool:
        return type(self).measure is not Intervention.measure

    def measure(self, batch: pa.RecordBatch) -> tuple[np.ndarray, ...]:
        """Counts over one batch, summed element-wise over batches (only if the edit needs them)."""
        return ()

    def finish(self, totals: tuple[np.ndarray, ...]) -> Any:
        """The state :meth:`apply` reads, from the summed counts."""
        return None

    @abc.abstractmethod
    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        """The edited batch and what was changed, from (batch, params, seed, corpus state)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LexiconIntervention(Intervention):
    """An intervention driven by the cue lexicon: ``k`` = top-k words per class (null = all),
    given by its ``conf/intervention`` option."""

    k: int | None

    needs_lexicon: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        check_k(self.name, self.k)

    @property
    def cues(self) -> Lexicon:
        """The cue lexicon, which every lexicon intervention is built with."""
        if self.lexicon is None:    # refused by __post_init__; here for the type checker
            raise ConfigError(f"intervention {self.name!r} needs a cue lexicon")
        return self.lexicon


def cue_vocab(lexicon: Lexicon, k: int | None, classes: Iterable[str] | None = None) -> list[str]:
    """Lowercased union of the given classes' top-k words, in a stable order, no repeats."""
    seen: dict[str, None] = {}
    for c in (classes if classes is not None else lexicon.words):
        for w in lexicon.top(c, k):
            seen.setdefault(w.lower(), None)
    return list(seen)


def cue_index(words: pa.StringArray, vocab: list[str]) -> np.ndarray:
    """[W] index of each word (case-insensitive, whole word) in ``vocab``, -1 if not a cue."""
    if not vocab or len(words) == 0:
        return np.full(len(words), -1, dtype=np.int64)
    idx = pc.index_in(pc.utf8_lower(words), value_set=pa.array(vocab, pa.string()))
    return pc.fill_null(idx, -1).to_numpy(zero_copy_only=False).astype(np.int64)


def check_k(name: str, k: int | None) -> None:
    if k is not None and (not isinstance(k, int) or k < 1):
        raise ConfigError(f"{name}: k must be a positive integer or null (all words), got {k!r}")
