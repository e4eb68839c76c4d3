"""One judge component for every model that judges text: the detector judges, CoBia's raters
and FairMT-Bench's judge.

A judge is three parts:
- a **model**: a :class:`ChatModel` built from an ``llm`` block, loaded on first need
  (``load``), so a run whose every verdict is given or pre-filtered loads none;
- a **prompt**: the request messages for one item (its context and the text judged);
- a **reading** of the reply: parsed from a sampled reply (``Reading.text``: a parser that
  returns the verdict, or None when the reply names none) or, with ``Reading.scores``, the
  most probable of its label words (one scoring pass, never invalid).

An invalid verdict is kept with its raw text and counted in one place, ``invalid_metrics``:
``<prefix>/invalid`` (how many) and ``<prefix>/invalid_rate`` (of how many judged); it is never
mapped to a label. A judge holds no run state besides its loaded model, so re-judging saved
replies (``probe.py rescore=<run dir>``) is the same call over the same items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tqdm.auto import tqdm

from benevaudit.llm.base import ChatModel, Conversation, Sampling
from benevaudit.llm.batched import batched_chat
from benevaudit.llm.verdicts import Verdict, read_scores, read_text

I = TypeVar("I")                      # what one item is to its judge (context and text)
Parser = Callable[[str], Hashable | None]


@dataclass(frozen=True)
class Reading:
    """How a verdict is read from the model: ``parse`` over a reply sampled with ``sampling``,
    or, where ``words`` are given, the label (``labels``, in the words' order) whose word is
    the most probable continuation."""

    parse: Parser | None = None
    sampling: Sampling | None = None
    words: tuple[str, ...] = ()
    labels: tuple[Hashable, ...] = ()

    @staticmethod
    def text(parse: Parser, sampling: Sampling) -> Reading:
        return Reading(parse=parse, sampling=sampling)

    @staticmethod
    def scores(words: Sequence[str], labels: Sequence[Hashable] | None = None) -> Reading:
        return Reading(words=tuple(words), labels=tuple(words if labels is None else labels))

    @property
    def scored(self) -> bool:
        return bool(self.words)


class Judge(Generic[I]):
    """A model, a prompt and a reading: ``verdicts(items)`` asks the model about each item and
    reads one :class:`Verdict` per item, in order."""

    def __init__(self, name: str, build: Callable[[], ChatModel],
                 prompt: Callable[[I], Conversation], reading: Reading) -> None:
        if reading.parse is None and not reading.scored:
            raise ValueError(f"judge {name}: a reading needs a parser or label words")
        self.name, self.build, self.prompt, self.reading = name, build, prompt, reading
        self._model: ChatModel | None = None

    def load(self) -> ChatModel:
        """The model, built on first call and kept until ``close``."""
        if self._model is None:
            self._model = self.build()
        return self._model

    def close(self) -> None:
        """Close the model this judge built (a caller whose builder shares models closes them
        itself and never calls this)."""
        if self._model is not None:
            self._model.close()
            self._model = None

    def requests(self, items: Sequence[I]) -> list[Conversation]:
        """The request messages for each item (a pure function of the items)."""
        return [self.prompt(item) for item in items]

    def verdicts(self, items: Sequence[I], chunk: int | None = None, progress: bool = False,
                 once: bool = False, keys: Sequence[str] | None = None) -> list[Verdict]:
        """One verdict per item. ``chunk``: items per model call (None: one call). ``once``
        (text readings only): identical requests are sent once and read alike, identical by
        ``keys`` where given, else by their text."""
        return self.read(self.requests(items), chunk, progress, once, keys)

    def read(self, conversations: Sequence[Conversation], chunk: int | None = None,
             progress: bool = False, once: bool = False, keys: Sequence[str] | None = None
             ) -> list[Verdict]:
        """One verdict per conversation already rendered (``requests``)."""
        if not conversations:
            return []
        reading, model = self.reading, self.load()
        if once or keys is not None:
            if reading.parse is None or reading.sampling is None:
                raise ValueError(f"judge {self.name}: requests are sent once in a text reading")
            replies = batched_chat(model, conversations, reading.sampling, chunk=chunk or 16,
                                   progress=progress, desc=f"judge {self.name}", keys=keys)
            return [Verdict(reading.parse(r.text), r.text) for r in replies]
        size = chunk or len(conversations)
        out: list[Verdict] = []
        for start in tqdm(range(0, len(conversations), size), disable=not progress,
                          desc=f"judge {self.name}", unit=f"×{size}"):
            batch = list(conversations[start:start + size])
            if reading.scored:
                out += read_scores(model, batch, reading.words, reading.labels)
            else:
                assert reading.parse is not None and reading.sampling is not None
                out += read_text(model, batch, reading.sampling, reading.parse)
        return out


def invalid_metrics(prefix: str, verdicts: Sequence[Hashable | None]) -> dict[str, float]:
    """``<prefix>/invalid``: the verdicts that are None; ``<prefix>/invalid_rate``: their
    share of all (NaN when there are none)."""
    bad = sum(v is None for v in verdicts)
    n = len(verdicts)
    return {f"{prefix}/invalid": float(bad),
            f"{prefix}/invalid_rate": bad / n if n else math.nan}
