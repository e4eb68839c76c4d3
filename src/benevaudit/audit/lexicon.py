"""Cue lexicons: ``cue_lexicon.json`` is ``{class: [{"word": str, "score": float}, ...]}``, ranked.

Lexicons are produced by attribution (:mod:`benevaudit.audit.attribution`) and consumed by the
masking, frequency-normalisation and symmetric-injection interventions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benevaudit.errors import InputError
from benevaudit.files import read_text
from benevaudit.schema import CLASSES


@dataclass(frozen=True)
class Lexicon:
    """Ranked cue words per class (lowercase word types), best first."""

    words: dict[str, tuple[str, ...]]
    scores: dict[str, tuple[float, ...]]

    def top(self, cls: str, k: int | None = None) -> tuple[str, ...]:
        return self.words.get(cls, ())[:k]

    def union(self, k: int | None = None) -> frozenset[str]:
        """The union of the classes' top-k lexicons (what cue masking removes)."""
        return frozenset(w for c in self.words for w in self.top(c, k))

    def to_json(self) -> dict[str, list[dict[str, float | str]]]:
        return {
            c: [{"word": w, "score": float(s)} for w, s in zip(self.words[c], self.scores[c])]
            for c in self.words
        }


def lexicon_from_ranked(ranked: dict[str, list[tuple[str, float]]]) -> Lexicon:
    return Lexicon(
        words={c: tuple(w for w, _ in r) for c, r in ranked.items()},
        scores={c: tuple(float(s) for _, s in r) for c, r in ranked.items()},
    )


def load_lexicon(path: str | Path) -> Lexicon:
    """Read ``cue_lexicon.json``; errors name the file and what was expected."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no cue lexicon here (expected a cue_lexicon.json "
                                "written by train.py or attribute.py)")
    try:
        raw = json.loads(read_text(path, expected="a cue_lexicon.json written by train.py"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a cue lexicon: not valid JSON ({e}); expected "
                         "{class: [{word, score}]} as written by train.py") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected an object {{class: [{{word, score}}]}}, got "
                         f"{type(raw).__name__}")
    ranked: dict[str, list[tuple[str, float]]] = {}
    for cls, entries in raw.items():
        if cls not in CLASSES:
            raise InputError(f"{path}: unknown class {cls!r}; expected one of {list(CLASSES)}")
        if not isinstance(entries, list):
            raise InputError(f"{path}: class {cls!r}: expected a list of {{word, score}}, got "
                             f"{type(entries).__name__}")
        ranked[cls] = []
        for i, item in enumerate(entries):
            if not (isinstance(item, dict) and isinstance(item.get("word"), str) and item["word"]
                    and isinstance(item.get("score"), (int, float))):
                raise InputError(f"{path}: class {cls!r}, entry {i}: expected "
                                 "{\"word\": non-empty string, \"score\": number}")
            ranked[cls].append((item["word"], float(item["score"])))
    return lexicon_from_ranked(ranked)
