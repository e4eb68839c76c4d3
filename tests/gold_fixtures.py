"""Hand-written stand-ins in the layouts of the gold releases, for the default tier.

The releases themselves (EDOS, DiaSafety) hold sexist and unsafe human text and are read only
in the data tier, from the user's folder. These stand-ins have the same files, columns and
label values, with neutral sentences written here; every text carries a marker (``SENTINEL``)
so a test can prove no item text reaches a log, an error, metrics or a report.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

SENTINEL = "qzxsentinel"
EDOS_HEADER = ("rewire_id", "text", "label_sexist", "label_category", "label_vector", "split")
# (label_sexist, label_category, label_vector) of the EDOS codebook, with how many stand-ins
EDOS_ROWS = (
    ("not sexist", "none", "none", 12),
    ("sexist", "1. threats, plans to harm and incitement", "1.1 threats of harm", 2),
    ("sexist", "1. threats, plans to harm and incitement",
     "1.2 incitement and encouragement of harm", 2),
    ("sexist", "2. derogation", "2.1 descriptive attacks", 3),
    ("sexist", "2. derogation", "2.2 aggressive and emotive attacks", 3),
    ("sexist", "2. derogation", "2.3 dehumanising attacks & overt sexual objectification", 2),
    ("sexist", "3. animosity", "3.1 casual use of gendered slurs, profanities, and insults", 3),
    ("sexist", "3. animosity", "3.2 immutable gender differences and gender stereotypes", 2),
    ("sexist", "3. animosity", "3.3 backhanded gendered compliments", 6),
    ("sexist", "3. animosity", "3.4 condescending explanations or unwelcome advice", 6),
    ("sexist", "4. prejudiced discussions", "4.1 supporting mistreatment of individual women", 1),
    ("sexist", "4. prejudiced discussions",
     "4.2 supporting systemic discrimination against women as a group", 1),
)
SPLITS = ("train", "train", "train", "dev", "test")


def write_edos(root: Path) -> Path:
    """``<root>/data/edos_labelled_aggregated.csv``: 12 N, 12 OB, 12 BB, 7 strata posts."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    n = 0
    with open(root / "data" / "edos_labelled_aggregated.csv", "w", newline="",
              encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(EDOS_HEADER)
        for sexist, category, vector, count in EDOS_ROWS:
            for _ in range(count):
                text = f"{SENTINEL} post {n} about the weather, {vector[:3]}, please."
                out.writerow((f"sexism2022_english-{n}", text, sexist, category, vector,
                              SPLITS[n % len(SPLITS)]))
                n += 1
    return root


def write_diasafety(root: Path) -> Path:
    """``<root>/DiaSafety_dataset/{train,val,test}.json`` with two categories."""
    folder = root / "DiaSafety_dataset"
    folder.mkdir(parents=True, exist_ok=True)
    for split, count in (("train", 12), ("val", 4), ("test", 4)):
        items = [{"context": f"{SENTINEL} context {split} {i}?",
                  "response": f"{SENTINEL} response {split} {i}.",
                  "category": "Biased Opinion" if i % 4 else "Risk Ignorance",
                  "label": "Unsafe" if i % 2 else "Safe"} for i in range(count)]
        (folder / f"{split}.json").write_text(json.dumps(items), encoding="utf-8")
    return root


def write_labelled(path: Path, rows: int = 18) -> Path:
    """A user's CSV gold set: id, text, a raw label 0/1/2/9, a stratum and a context."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(("item", "reply", "gold", "source", "prompt"))
        for i in range(rows):
            out.writerow((f"x{i}", f"{SENTINEL} reply {i}.", (0, 1, 2, 9)[i % 4],
                          ("forum", "chat")[i % 2], f"{SENTINEL} asks {i}?"))
    return path


def gold_overrides(kind: str, tmp: Path, key: str = "data") -> list[str]:
    """The command-line overrides that make ``data=<kind>`` (or the block at ``key``, e.g.
    ``external.edos.data``) runnable on this folder's stand-ins; empty for another kind."""
    if kind == "edos":
        return [f"{key}.path={write_edos(tmp / 'edos')}"]
    if kind == "diasafety":
        return [f"{key}.path={write_diasafety(tmp / 'dia')}"]
    if kind == "labelled":
        return [f"{key}.path={write_labelled(tmp / 'gold.csv')}", f"{key}.text_column=reply",
                f"{key}.label_column=gold", f"{key}.label_map={{0: N, 1: OB, 2: BB, 9: drop}}"]
    return []
