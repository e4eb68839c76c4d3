"""The dialogue record: the one data contract every benevaudit component reads and writes.

A record is one dialogue. On disk it is a JSONL line or a Parquet row with the fields below;
in memory it is a :class:`Dialogue`. Readers and validation live in :mod:`benevaudit.corpus`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

CLASSES: tuple[str, ...] = ("N", "OB", "BB")
"""Class order used for logits, probabilities and confusion matrices everywhere."""
CLASS_INDEX: dict[str, int] = {c: i for i, c in enumerate(CLASSES)}
CLASS_NAMES: dict[str, str] = {
    "N": "neutral support",
    "OB": "overt bias (disparate treatment, non-warm tone)",
    "BB": "benevolent bias (disparate treatment, warm tone)",
}

SPEAKERS: tuple[str, ...] = ("user", "agent")
SPLITS: tuple[str, ...] = ("train", "validation", "test")

# The study's vocabularies. Other values are accepted (other studies add their own) and listed
# in the dataset card; these are the ones the scripted generator crosses.
ROLES: tuple[str, ...] = ("mental_health", "health_lifestyle")
AGES: tuple[str, ...] = ("young", "middle-aged", "elder")
GENDERS: tuple[str, ...] = ("male", "female", "non-binary")
RACES: tuple[str, ...] = (
    "White", "Black", "East Asian", "Southeast Asian", "Latino", "Indian", "Middle Eastern",
)
ABILITIES: tuple[str, ...] = (
    "none", "with sensory disability", "with mobility disability",
    "with cognitive disability", "with self-care disability",
)
USER_FIELDS: tuple[str, ...] = ("age", "gender", "race", "ability")
AGENT_FIELDS: tuple[str, ...] = ("age", "gender", "race")
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "role": ROLES, "age": AGES, "gender": GENDERS, "race": RACES, "ability": ABILITIES,
}


@dataclass(frozen=True)
class Turn:
    speaker: str  # "user" | "agent"
    text: str


@dataclass(frozen=True)
class Dialogue:
    """One dialogue. ``agent`` is None when the agent's demographics are unspecified."""

    id: str
    label: str | None
    role: str
    generator: str
    user: dict[str, str]
    agent: dict[str, str] | None
    turns: tuple[Turn, ...]
    split: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["turns"] = [asdict(t) for t in self.turns]
        return out

    @property
    def triplet_key(self) -> tuple:
        """The matched-triplet key: the N/OB/BB dialogues of one condition share it."""
        return triplet_key(self.role, self.generator, self.user, self.agent)


def triplet_key(role: str, generator: str, user: dict | None, agent: dict | None) -> tuple:
    u = tuple((user or {}).get(k) for k in USER_FIELDS)
    a = None if agent is None else tuple(agent.get(k) for k in AGENT_FIELDS)
    return (role, generator, u, a)


USER_TYPE = pa.struct([(k, pa.string()) for k in USER_FIELDS])
AGENT_TYPE = pa.struct([(k, pa.string()) for k in AGENT_FIELDS])
TURN_TYPE = pa.struct([("speaker", pa.string()), ("text", pa.string())])

ARROW_SCHEMA = pa.schema([
    ("id", pa.string()),
    ("label", pa.string()),
    ("role", pa.string()),
    ("generator", pa.string()),
    ("user", USER_TYPE),
    ("agent", AGENT_TYPE),
    ("turns", pa.list_(TURN_TYPE)),
    ("split", pa.string()),
    ("meta", pa.string()),  # JSON-encoded dict: Parquet has no schemaless map
])
"""Columnar form of the record (Parquet files, Arrow batches for interventions)."""
