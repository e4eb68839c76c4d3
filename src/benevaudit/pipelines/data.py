"""Turning the ``data`` config node into dialogues; ``split`` is applied by
:func:`benevaudit.splits.apply_split`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benevaudit.corpus import read_corpus
from benevaudit.errors import ConfigError
from benevaudit.generation.embedded import ensure_scripted_sample
from benevaudit.generation.scripted import PlantedCue
from benevaudit.schema import Dialogue


def load_dialogues(data: dict[str, Any], cache_dir: str | Path) -> list[Dialogue]:
    """Read a corpus on disk, or write/reuse the content-addressed scripted sample."""
    kind = data.get("kind")
    if kind == "corpus":
        return read_corpus(data["path"])
    if kind == "embedded":
        cues = [PlantedCue(c["token"], c["label"], float(c["rate"]))
                for c in data.get("planted_cues") or []]
        path = ensure_scripted_sample(Path(cache_dir) / "embedded", size=int(data["size"]),
                                      seed=int(data["seed"]), planted_cues=cues,
                                      signal=float(data["signal"]))
        return read_corpus(path)
    raise ConfigError(f"data.kind must be 'embedded' or 'corpus', got {kind!r}")
