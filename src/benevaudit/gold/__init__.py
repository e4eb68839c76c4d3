"""Human-labelled gold sets nobody on the project wrote, read as dialogue records.

``data=edos`` (SemEval-2023 Task 10's expert-labelled posts, mapped by the EDOS codebook),
``data=diasafety`` (DiaSafety's context/response pairs, "Biased Opinion" by default) and
``data=labelled`` (any user's CSV, JSONL or Parquet gold set with a label map). Each reader
turns the release's file into :class:`~benevaudit.schema.Dialogue` records, so every
detector, classifier and judge scores them through the same code as a generated corpus.
Messages never quote a post: the releases hold slurs and sexist text.

A core room: it may import the core modules (``schema``, ``files``, ``specs``, ``errors``) only.
"""

from __future__ import annotations

from benevaudit.gold.read import GOLD_KINDS, gold_files, is_gold, read_gold
from benevaudit.gold.spec import (
    DiaSafetyDataSpec, EdosDataSpec, GoldDataSpec, LabelledDataSpec,
)

__all__ = ["GOLD_KINDS", "DiaSafetyDataSpec", "EdosDataSpec", "GoldDataSpec",
           "LabelledDataSpec", "gold_files", "is_gold", "read_gold"]
