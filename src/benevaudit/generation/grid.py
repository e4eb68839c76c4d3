"""The attribute grid a BenevDial-style corpus crosses, and the id of each condition.

A condition is one cell of 3 classes × 315 user demographics × 64 agent demographics
(63 combinations + unspecified) × 2 roles × 3 generators = 362,880 dialogues. Each condition
has an id derived from its fields alone (sha256, never ``hash()``), so the same condition has
the same id on every run and machine: that is what makes generation resumable and corpora
from different runs joinable.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.schema import ABILITIES, AGES, CLASSES, GENDERS, RACES, ROLES

SCRIPTED_GENERATORS: tuple[str, ...] = ("scripted-a", "scripted-b", "scripted-c")
"""The three scripted generator styles, standing in for the study's three LLMs."""

UserDemo = tuple[str, str, str, str]    # (age, gender, race, ability)
AgentDemo = tuple[str, str, str] | None  # (age, gender, race), None = unspecified

USER_DEMOGRAPHICS: tuple[UserDemo, ...] = tuple(itertools.product(AGES, GENDERS, RACES, ABILITIES))
AGENT_DEMOGRAPHICS: tuple[AgentDemo, ...] = (None, *itertools.product(AGES, GENDERS, RACES))

_ROLE_CODES = {"mental_health": "mh", "health_lifestyle": "hl"}
FILTER_KEYS: tuple[str, ...] = (
    "generator", "role", "label", "user.age", "user.gender", "user.race", "user.ability",
    "agent.persona", "agent.age", "agent.gender", "agent.race",
)
UNSPECIFIED = "unspecified"
"""``agent.persona`` filter value for conditions whose agent demographics are unspecified
(``"specified"`` selects the other 63 agent demographics)."""


@dataclass(frozen=True)
class Condition:
    """One generation condition: everything a dialogue's content is conditioned on."""

    generator: str
    role: str
    label: str
    user: UserDemo
    agent: AgentDemo

    @property
    def user_dict(self) -> dict[str, str]:
        return dict(zip(("age", "gender", "race", "ability"), self.user))

    @property
    def agent_dict(self) -> dict[str, str] | None:
        return None if self.agent is None else dict(zip(("age", "gender", "race"), self.agent))

    @property
    def cell(self) -> tuple:
        """The matched-triplet cell (everything but the class)."""
        return (self.generator, self.role, self.user, self.agent)

    @property
    def id(self) -> str:
        return condition_id(self)


def condition_id(c: Condition) -> str:
    """``bd-<generator>-<role code>-<label>-<10 hex of sha256>``: readable and stable."""
    agent = "|".join(c.agent) if c.agent is not None else UNSPECIFIED
    key = "\x1f".join((c.generator, c.role, c.label, "|".join(c.user), agent))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
    role = _ROLE_CODES.get(c.role, c.role.replace("_", ""))
    return f"bd-{c.generator}-{role}-{c.label.lower()}-{digest}"


def _allowed(filters: Mapping[str, Any], key: str, universe: Sequence[Any]) -> list[Any]:
    """The values of ``universe`` a filter keeps, in universe order; an unknown value is an error."""
    if key not in filters or filters[key] is None:
        return list(universe)
    want = filters[key]
    want = [want] if isinstance(want, (str, int, float)) else list(want)
    want = [str(w) for w in want]
    bad = [w for w in want if w not in universe]
    if bad:
        raise ConfigError(f"filters.{key}: unknown value(s) {bad}; valid values: {list(universe)}")
    return [u for u in universe if u in want]


def flatten_filters(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """Accept ``{"user": {"age": ...}}`` or ``{"user.age": ...}``; reject unknown keys."""
    flat: dict[str, Any] = {}
    for k, v in (filters or {}).items():
        if isinstance(v, Mapping):
            for k2, v2 in v.items():
                flat[f"{k}.{k2}"] = v2
        else:
            flat[str(k)] = v
    unknown = sorted(set(flat) - set(FILTER_KEYS))
    if unknown:
        raise ConfigError(f"unknown filter key(s) {unknown}; valid keys: {list(FILTER_KEYS)}")
    return flat


def _agents(flat: Mapping[str, Any]) -> list[AgentDemo]:
    mode = _allowed(flat, "agent.persona", (UNSPECIFIED, "specified"))
    ages = _allowed(flat, "agent.age", AGES)
    genders = _allowed(flat, "agent.gender", GENDERS)
    races = _allowed(flat, "agent.race", RACES)
    narrowed = any(flat.get(k) is not None for k in ("agent.age", "agent.gender", "agent.race"))
    out: list[AgentDemo] = []
    if UNSPECIFIED in mode and not narrowed:
        out.append(None)
    if "specified" in mode:
        out.extend(itertools.product(ages, genders, races))
    return out


def iter_conditions(filters: Mapping[str, Any] | None = None, limit: int | None = None,
                    generators: Sequence[str] = SCRIPTED_GENERATORS) -> Iterator[Condition]:
    """Conditions in a fixed order (generator, role, user, agent, then class innermost).

    Classes innermost keep each matched N/OB/BB triplet adjacent, so any prefix (``limit``)
    is triplet-complete when ``limit`` is a multiple of 3. Filters map a key of
    :data:`FILTER_KEYS` (flat, or nested as ``{"user": {"age": ...}}``) to a value or a list of
    values; None means no filter; ``agent.persona`` takes ``"unspecified"`` or ``"specified"``.
    """
    flat = flatten_filters(filters)
    gens = _allowed(flat, "generator", tuple(generators))
    roles = _allowed(flat, "role", ROLES)
    labels = _allowed(flat, "label", CLASSES)
    users = list(itertools.product(*(_allowed(flat, f"user.{k}", v) for k, v in
                                     (("age", AGES), ("gender", GENDERS), ("race", RACES),
                                      ("ability", ABILITIES)))))
    agents = _agents(flat)
    cells = itertools.product(gens, roles, users, agents, labels)
    for n, (g, r, u, a, lab) in enumerate(cells):
        if limit is not None and n >= limit:
            return
        yield Condition(g, r, lab, u, a)


def count_conditions(filters: Mapping[str, Any] | None = None, limit: int | None = None,
                     generators: Sequence[str] = SCRIPTED_GENERATORS) -> int:
    """How many conditions :func:`iter_conditions` yields, without building them."""
    flat = flatten_filters(filters)
    n = len(_allowed(flat, "generator", tuple(generators))) * len(_allowed(flat, "role", ROLES))
    n *= len(_allowed(flat, "label", CLASSES)) * len(_agents(flat))
    for k, v in (("age", AGES), ("gender", GENDERS), ("race", RACES), ("ability", ABILITIES)):
        n *= len(_allowed(flat, f"user.{k}", v))
    return n if limit is None else min(n, limit)
