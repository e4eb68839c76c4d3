"""The embedded corpus: a stratified scripted sample written once and reused (``data=embedded``).

The sample holds whole matched triplets: for each selected cell (user demographics × agent ×
role × generator) all three classes N/OB/BB, so class balance and the triplet bootstrap hold
at any size. Cells are spread evenly over the six (role, generator) strata. The file name is a
content hash of every parameter and the generator version, so a changed parameter or phrase
bank gives a new file and an unchanged one is read back instead of regenerated.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
import numpy as np

from benevaudit.corpus import corpus_files, read_corpus, write_parquet
from benevaudit.errors import ConfigError
from benevaudit.generation.spec import CorpusDataSpec, DataSpec, EmbeddedDataSpec
from benevaudit.generation.grid import (
    AGENT_DEMOGRAPHICS, SCRIPTED_GENERATORS, USER_DEMOGRAPHICS, Condition,
)
from benevaudit.generation.scripted import (
    DEFAULT_SIGNAL, SCRIPTED_VERSION, PlantedCue, compose_dialogue,
)
from benevaudit.gold import gold_files, read_gold
from benevaudit.schema import CLASSES, ROLES, Dialogue


def sample_cells(n_cells: int, seed: int) -> list[tuple[str, str, tuple, tuple | None]]:
    """``n_cells`` distinct (generator, role, user, agent) cells, even across the 6 strata."""
    strata = [(g, r) for g in SCRIPTED_GENERATORS for r in ROLES]
    per_stratum = len(USER_DEMOGRAPHICS) * len(AGENT_DEMOGRAPHICS)
    if not 0 < n_cells <= per_stratum * len(strata):
        raise ConfigError(f"sample size must give between 1 and {per_stratum * len(strata)} "
                          f"triplets, got {n_cells}")
    rng = np.random.default_rng(seed)
    base, extra = divmod(n_cells, len(strata))
    lucky = set(rng.choice(len(strata), size=extra, replace=False).tolist())
    cells = []
    for s, (g, r) in enumerate(strata):
        k = base + (s in lucky)
        for flat in np.sort(rng.choice(per_stratum, size=k, replace=False)):
            u, a = divmod(int(flat), len(AGENT_DEMOGRAPHICS))
            cells.append((g, r, USER_DEMOGRAPHICS[u], AGENT_DEMOGRAPHICS[a]))
    return cells


def sample_conditions(size: int, seed: int) -> Iterator[Condition]:
    """The conditions of a ``size``-dialogue sample (rounded to whole triplets)."""
    for g, r, u, a in sample_cells(max(1, round(size / 3)), seed):
        for label in CLASSES:
            yield Condition(g, r, label, u, a)


def sample_key(size: int, seed: int, planted_cues: Sequence[PlantedCue], signal: float) -> str:
    """Content hash naming a sample: every parameter plus the generator version."""
    params = {"size": 3 * max(1, round(size / 3)), "seed": seed, "signal": float(signal),
              "cues": [asdict(c) for c in planted_cues], "version": SCRIPTED_VERSION}
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def ensure_scripted_sample(cache_dir: str | Path, size: int, seed: int,
                           planted_cues: Sequence[PlantedCue] = (),
                           signal: float = DEFAULT_SIGNAL) -> Path:
    """Path of the Parquet sample for these parameters, writing it first if it is missing."""
    cues = tuple(c if isinstance(c, PlantedCue) else PlantedCue(**c) for c in planted_cues)
    if not 0.0 <= signal <= 1.0:
        raise ConfigError(f"signal must be in [0, 1], got {signal}")
    path = Path(cache_dir) / f"scripted-{sample_key(size, seed, cues, signal)}.parquet"
    if path.is_file():
        return path
    dialogues = [compose_dialogue(c, seed=seed, signal=signal, planted_cues=cues)
                 for c in sample_conditions(size, seed)]
    # A unique temporary name, so two processes filling the cache at once cannot collide;
    # write_parquet itself renames atomically, and the final replace is atomic as well.
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.parquet")
    write_parquet(dialogues, tmp)
    tmp.replace(path)
    return path


def load_dialogues(data: DataSpec, cache_dir: str | Path) -> list[Dialogue]:
    """The dialogues of a ``data`` block: a corpus on disk (``data=corpus``), a human-labelled
    gold set (``data=edos|diasafety|labelled``), or the scripted sample (``data=embedded``),
    written once under ``cache_dir`` and read back after."""
    if isinstance(data, CorpusDataSpec):
        return read_corpus(data.path)
    if not isinstance(data, EmbeddedDataSpec):
        return read_gold(data)
    path = ensure_scripted_sample(Path(cache_dir) / "embedded", size=data.size, seed=data.seed,
                                  planted_cues=[c.cue() for c in data.planted_cues],
                                  signal=data.signal)
    return read_corpus(path)


def data_files(data: DataSpec, cache_dir: str | Path) -> list[Path]:
    """The files :func:`load_dialogues` reads for ``data`` (after it has run: the embedded
    sample is then in the cache)."""
    if isinstance(data, CorpusDataSpec):
        return corpus_files(data.path)
    if not isinstance(data, EmbeddedDataSpec):
        return gold_files(data)
    return [ensure_scripted_sample(Path(cache_dir) / "embedded", size=data.size, seed=data.seed,
                                   planted_cues=[c.cue() for c in data.planted_cues],
                                   signal=data.signal)]
