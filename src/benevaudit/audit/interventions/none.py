"""``none``: the identity, the baseline row of every intervention table."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar

import pyarrow as pa

from benevaudit.audit.interventions.base import Edit, Intervention


@dataclasses.dataclass(frozen=True)
class NoIntervention(Intervention):
    name: ClassVar[str] = "none"

    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        return Edit(batch, Counter())
