"""The ``data`` blocks of the gold sets: ``data=edos``, ``data=diasafety``, ``data=labelled``.

Each names the release's folder or the user's file (``data.path``) and how its labels map to
N / OB / BB. Paths and maps are checked here, before anything is read or any model loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, field_validator, model_validator

from benevaudit.errors import ConfigError
from benevaudit.specs import Spec

EDOS_FILE = "data/edos_labelled_aggregated.csv"
DIASAFETY_DIR = "DiaSafety_dataset"
# The EDOS codebook's eleven fine-grained vectors (Kirk et al., 2023), by their codes.
EDOS_VECTORS: tuple[str, ...] = ("1.1", "1.2", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "3.4",
                                 "4.1", "4.2")
DIASAFETY_CATEGORIES: tuple[str, ...] = (
    "Biased Opinion", "Offending User", "Risk Ignorance", "Toxicity Agreement",
    "Unauthorized Expertise",
)
MAPPED = ("N", "OB", "BB", "drop")
Vectors = Annotated[list[str], Field(min_length=1)]


def given_path(path: str, kind: str, expected: str) -> Path:
    """``data.path`` as an existing path; ``???`` (unset) and a missing path are one line."""
    if path in ("", "???"):
        raise ConfigError(f"data.path is required with data={kind}: data.path=<{expected}>")
    found = Path(path).expanduser()
    if not found.exists():
        raise ConfigError(f"data.path={path}: no such file or directory (expected {expected})")
    return found


class EdosDataSpec(Spec):
    """``data=edos``: a clone of ``rewire-online/edos``; the file it reads is ``EDOS_FILE``.

    ``ob_vectors`` and ``bb_vectors`` pick the codebook vectors of each class; every other
    sexist vector is a descriptive stratum (kept unlabelled when ``strata`` is true, never in
    macro-F1). ``wrap_user_turn`` puts one fixed user turn before every post (an ablation).
    """

    kind: Literal["edos"]
    path: str
    ob_vectors: Vectors
    bb_vectors: Vectors
    strata: bool
    wrap_user_turn: Optional[str]

    @field_validator("ob_vectors", "bb_vectors")
    @classmethod
    def known(cls, vectors: list[str]) -> list[str]:
        unknown = [v for v in vectors if v not in EDOS_VECTORS]
        if unknown:
            raise ValueError(f"unknown EDOS vector(s) {unknown}; the codebook's are "
                             f"{list(EDOS_VECTORS)}")
        return vectors

    @model_validator(mode="after")
    def readable(self) -> EdosDataSpec:
        both = sorted(set(self.ob_vectors) & set(self.bb_vectors))
        if both:
            raise ConfigError(f"data.ob_vectors and data.bb_vectors share {both}: a vector "
                              "belongs to one class")
        if self.wrap_user_turn is not None and not self.wrap_user_turn.strip():
            raise ConfigError("data.wrap_user_turn: expected a non-empty user turn or null")
        root = given_path(self.path, "edos", "a clone of the EDOS repository")
        if not (root / EDOS_FILE).is_file():
            raise ConfigError(f"data.path={self.path}: no {EDOS_FILE} in it (expected a clone "
                              "of rewire-online/edos)")
        return self


class DiaSafetyDataSpec(Spec):
    """``data=diasafety``: a clone of ``thu-coai/DiaSafety``; reads
    ``DiaSafety_dataset/{train,val,test}.json``, the ``categories`` chosen (Unsafe → OB,
    Safe → N), each file's split kept."""

    kind: Literal["diasafety"]
    path: str
    categories: Annotated[list[str], Field(min_length=1)]

    @field_validator("categories")
    @classmethod
    def known(cls, categories: list[str]) -> list[str]:
        unknown = [c for c in categories if c not in DIASAFETY_CATEGORIES]
        if unknown:
            raise ValueError(f"unknown DiaSafety categor(ies) {unknown}; the release's are "
                             f"{list(DIASAFETY_CATEGORIES)}")
        return categories

    @model_validator(mode="after")
    def readable(self) -> DiaSafetyDataSpec:
        root = given_path(self.path, "diasafety", "a clone of the DiaSafety repository")
        missing = [f"{DIASAFETY_DIR}/{s}.json" for s in ("train", "val", "test")
                   if not (root / DIASAFETY_DIR / f"{s}.json").is_file()]
        if missing:
            raise ConfigError(f"data.path={self.path}: missing {missing} (expected a clone of "
                              "thu-coai/DiaSafety)")
        return self


class LabelledDataSpec(Spec):
    """``data=labelled``: a user's gold set (``.csv``, ``.jsonl`` or ``.parquet``).

    ``label_map`` maps each raw label value (as text) to N, OB, BB or ``drop``. The optional
    columns give each item an id, a user turn before its text, a stratum and a split.
    """

    kind: Literal["labelled"]
    path: str
    text_column: str
    label_column: str
    label_map: dict[str, Literal["N", "OB", "BB", "drop"]]
    id_column: Optional[str]
    context_column: Optional[str]
    stratum_column: Optional[str]
    split_column: Optional[str]

    @field_validator("label_map", mode="before")
    @classmethod
    def textual_keys(cls, mapping: Any) -> Any:
        """YAML reads ``1: OB`` with an integer key; raw labels are compared as text."""
        if mapping in (None, "???"):
            raise ValueError("required: data.label_map={<raw label>: N|OB|BB|drop, ...}")
        if isinstance(mapping, dict):
            return {str(k): v for k, v in mapping.items()}
        return mapping

    @field_validator("text_column", "label_column")
    @classmethod
    def named(cls, column: str) -> str:
        if column in ("", "???"):
            raise ValueError("required: the name of a column of data.path")
        return column

    @model_validator(mode="after")
    def readable(self) -> LabelledDataSpec:
        expected = "a .csv, .jsonl or .parquet gold set"
        file = given_path(self.path, "labelled", expected)
        if file.is_dir() or file.suffix.lower() not in (".csv", ".jsonl", ".parquet"):
            raise ConfigError(f"data.path={self.path}: expected {expected}")
        if not set(self.label_map.values()) - {"drop"}:
            raise ConfigError("data.label_map drops every label: map at least one to N, OB or BB")
        return self


GoldDataSpec = Union[EdosDataSpec, DiaSafetyDataSpec, LabelledDataSpec]
