"""``data=diasafety``: DiaSafety's context/response pairs with human safety labels
(``thu-coai/DiaSafety``, ``DiaSafety_dataset/{train,val,test}.json``).

Category "Biased Opinion" by default (``data.categories``). Each pair is two turns, the context
as the user and the response as the agent; Unsafe → OB, Safe → N. DiaSafety has no benevolent
class, so BB metrics are absent. The file's split is kept, and is each record's stratum.
"""

from __future__ import annotations

from pathlib import Path

from benevaudit.errors import InputError
from benevaudit.files import read_json
from benevaudit.gold.records import gold_dialogue
from benevaudit.gold.spec import DIASAFETY_DIR, DiaSafetyDataSpec
from benevaudit.schema import Dialogue

FILES = {"train": "train", "val": "validation", "test": "test"}
LABELS = {"Unsafe": "OB", "Safe": "N"}
EXPECTED = "a DiaSafety split file: a JSON list of {context, response, category, label}"


def diasafety_files(spec: DiaSafetyDataSpec) -> list[Path]:
    return [Path(spec.path).expanduser() / DIASAFETY_DIR / f"{name}.json" for name in FILES]


def read_split(file: Path, split: str, categories: set[str]) -> list[Dialogue]:
    items = read_json(file, "data.path", EXPECTED)
    if not isinstance(items, list):
        raise InputError(f"{file}: expected {EXPECTED}")
    out = []
    for i, item in enumerate(items):
        where = f"{file}:item {i}"
        if not isinstance(item, dict) or {"context", "response", "category", "label"} - set(item):
            raise InputError(f"{where}: expected an object with context, response, category "
                             "and label")
        if not all(isinstance(item[k], str) for k in ("category", "label")):
            raise InputError(f"{where}: category and label must be text")
        if item["category"] not in categories:
            continue
        label = LABELS.get(item["label"])
        if label is None:
            raise InputError(f"{where}: label is none of {sorted(LABELS)}")
        out.append(gold_dialogue(f"diasafety-{file.stem}-{i}", label, item["response"], where,
                                 source="diasafety", context=item["context"], split=split,
                                 meta={"category": item["category"], "label": item["label"],
                                       "stratum": file.stem}))
    return out


def read_diasafety(spec: DiaSafetyDataSpec) -> list[Dialogue]:
    """The chosen categories' pairs of the three split files, in file order."""
    out: list[Dialogue] = []
    for file, split in zip(diasafety_files(spec), FILES.values()):
        out += read_split(file, split, set(spec.categories))
    if not out:
        raise InputError(f"data.path={spec.path}: no pair of categories {spec.categories}")
    return out
