"""Turning the ``data`` and ``split`` config nodes into split dialogues."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benevaudit.corpus import CorpusError, read_corpus
from benevaudit.errors import ConfigError
from benevaudit.generation.embedded import ensure_scripted_sample
from benevaudit.generation.scripted import PlantedCue
from benevaudit.schema import Dialogue, SPLITS
from benevaudit.splits import assign_splits, leave_one_generator_out, split_by_dialogue


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
                                      signal=float(data.get("signal", 0.8)))
        return read_corpus(path)
    raise ConfigError(f"data.kind must be 'embedded' or 'corpus', got {kind!r}")


def apply_split(dialogues: Sequence[Dialogue], split: dict[str, Any], seed: int) -> list[Dialogue]:
    strategy = split.get("strategy", "triplet")
    if strategy == "triplet":
        return assign_splits(dialogues, seed, split.get("ratios", (0.8, 0.1, 0.1)))
    if strategy == "dialogue":
        return split_by_dialogue(dialogues, seed, split.get("ratios", (0.8, 0.1, 0.1)))
    if strategy == "leave_one_generator_out":
        if not split.get("generator"):
            raise ConfigError("split.strategy=leave_one_generator_out needs split.generator=<name>")
        found = sorted({d.generator for d in dialogues})
        if split["generator"] not in found:
            raise ConfigError(f"split.generator={split['generator']!r}: no dialogues from it; "
                              f"generators in this corpus: {found}")
        return leave_one_generator_out(dialogues, split["generator"], seed)
    if strategy == "existing":
        missing = sum(d.split is None for d in dialogues)
        if missing:
            raise CorpusError(f"split.strategy=existing, but {missing} dialogues have no 'split'")
        return list(dialogues)
    raise ConfigError("split.strategy must be one of triplet, dialogue, existing, "
                      f"leave_one_generator_out; got {strategy!r}")


def by_split(dialogues: Sequence[Dialogue]) -> dict[str, list[Dialogue]]:
    out: dict[str, list[Dialogue]] = {s: [] for s in SPLITS}
    for d in dialogues:
        out[d.split].append(d)
    for s in SPLITS:
        if not out[s]:
            raise ConfigError(f"the '{s}' split is empty ({len(dialogues)} dialogues in all); "
                             "use a larger corpus or other split.ratios")
    return out
