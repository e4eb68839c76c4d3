"""A run's predictions and cue lexicons, as files: ``predictions.parquet`` (one row per
dialogue, from an evaluation pass) and ``cue_lexicon*.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from benevaudit.audit.lexicon import Lexicon
from benevaudit.files import write_parquet, write_text_atomically


def write_predictions(rows: list[dict[str, Any]], path: Path) -> Path:
    """A run's ``predictions.parquet``, one row per dialogue."""
    return write_parquet(pa.Table.from_pylist(rows), path)


def save_lexicon(lexicon: Lexicon, path: str | Path) -> Path:
    """A ``cue_lexicon.json`` (what ``audit.lexicon.load_lexicon`` reads)."""
    return write_text_atomically(path, json.dumps(lexicon.to_json(), indent=1,
                                                  ensure_ascii=False) + "\n")
