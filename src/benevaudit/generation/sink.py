"""Where :func:`~benevaudit.generation.driver.generate_corpus` puts a corpus: a
:class:`CorpusSink`, built by ``pipelines/generate.py`` (``benevaudit.outputs.corpus_shards``
keeps a resumable folder of Parquet shards). The driver decides what to generate, retries and
counts; the sink keeps what it is given durably and says what an earlier run already kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa

from benevaudit.schema import Dialogue

MANIFEST = "manifest.json"     # the generation a corpus folder holds (read to resume it)


class CorpusSink(Protocol):
    """A corpus being written, in the order the driver calls it: ``start``, then ``write`` and
    ``record`` per batch, ``seal`` once every batch is kept, ``release`` always (a run that
    stops early keeps what it wrote for the next one), then ``table``, ``failures`` and
    ``finish`` for the dataset card."""

    @property
    def name(self) -> str:
        """What the progress bar calls the corpus."""
        ...

    def start(self, ids: Sequence[str], params: dict[str, Any]) -> set[str]:
        """Claim the corpus for the generation of ``ids`` under ``params`` (refusing one that
        holds another generation), mark it incomplete, and return the ids already kept."""
        ...

    def write(self, dialogues: Sequence[Dialogue]) -> int:
        """Keep a batch durably; returns how many were kept."""
        ...

    def record(self, dialogue_id: str, attempt: int, reason: str, raw: str,
               final: bool = False) -> None:
        """Keep one failed attempt with the model's raw text (``final``: given up)."""
        ...

    def failures(self) -> list[dict[str, Any]]:
        """Every failed attempt kept, this run's and those of the runs it resumes."""
        ...

    def seal(self) -> None:
        """Close what is open: every dialogue kept is part of the corpus now."""
        ...

    def release(self) -> None:
        """Let go of open files without sealing; what was kept stays for the next run."""
        ...

    def table(self) -> pa.Table | None:
        """The columns the card counts (``generation.card.CARD_COLUMNS``) of every dialogue
        kept; None where there is none."""
        ...

    def finish(self, card: dict[str, Any], readme: str) -> None:
        """Keep the dataset card and its README, then mark the corpus complete."""
        ...
