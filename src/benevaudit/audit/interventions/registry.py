"""Intervention names, their short codes for tables, and the config → steps translation.

The command-line word (``intervention=mask``) is the module name (``mask.py``) and the
``name`` of its class; short codes (P, M, SH, F, S, RM) are for tables only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benevaudit.audit.interventions.base import Intervention
from benevaudit.audit.interventions.freq_norm import FreqNorm
from benevaudit.audit.interventions.mask import Mask
from benevaudit.audit.interventions.none import NoIntervention
from benevaudit.audit.interventions.punct import Punct
from benevaudit.audit.interventions.random_mask import RandomMask
from benevaudit.audit.interventions.shuffle import Shuffle
from benevaudit.audit.interventions.sym_inject import SymInject
from benevaudit.audit.lexicon import Lexicon
from benevaudit.errors import ConfigError

INTERVENTIONS: dict[str, type[Intervention]] = {
    cls.name: cls
    for cls in (NoIntervention, Punct, Mask, Shuffle, FreqNorm, SymInject, RandomMask)
}
SHORT_CODES: dict[str, str] = {
    "punct": "P", "mask": "M", "shuffle": "SH", "freq_norm": "F", "sym_inject": "S",
    "random_mask": "RM", "none": "—",
}


def check_name(name: str) -> None:
    if name not in INTERVENTIONS:
        raise ConfigError(f"unknown intervention {name!r}; valid names: "
                          f"{', '.join(sorted(INTERVENTIONS))} (compounds join them with '+')")


def build(name: str, params: Mapping[str, Any] | None, lexicon: Lexicon | None) -> Intervention:
    """The intervention ``name`` with ``params``; unknown names or parameters list valid ones."""
    check_name(name)
    cls = INTERVENTIONS[name]
    params = dict(params or {})
    unknown = sorted(set(params) - set(cls.params()))
    if unknown:
        raise ConfigError(f"intervention {name!r}: unknown parameter(s) {unknown}; valid: "
                          f"{cls.params() or 'none'}")
    missing = [p for p in cls.required() if p not in params]
    if missing:
        raise ConfigError(f"intervention {name!r}: parameter(s) {missing} missing; its "
                          f"conf/intervention/{name}.yaml gives them")
    return cls(lexicon=lexicon, **params)


def steps_from_config(node: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Ordered (name, params) steps from a saved ``intervention`` config node (a plain dict:
    ``{name, code, steps: {<intervention>: {params}}}``, as a run directory keeps it)."""
    if not isinstance(node, Mapping):
        raise ConfigError("intervention config must be a mapping with 'steps', got "
                          f"{type(node).__name__}")
    return steps_of(node.get("steps") or {})


def steps_of(steps: Mapping[str, Mapping[str, Any] | None]) -> list[tuple[str, dict[str, Any]]]:
    """Ordered (name, params) steps of an intervention's ``steps``, in the order applied;
    ``none`` is no step."""
    if not isinstance(steps, Mapping):
        raise ConfigError("intervention.steps must map intervention names to their parameters, "
                          f"got {type(steps).__name__}")
    out: list[tuple[str, dict[str, Any]]] = []
    for name, params in steps.items():
        check_name(str(name))
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(f"intervention.steps.{name}: parameters must be a mapping or null, "
                              f"got {params!r}")
        if name != "none":
            out.append((str(name), dict(params or {})))
    return out


def code_for(steps: Sequence[tuple[str, dict]]) -> str:
    """Short code of a sequence of steps for tables: ``P+F+SH``; ``—`` for no step."""
    return "+".join(SHORT_CODES[name] for name, _ in steps) or SHORT_CODES["none"]


def name_for(steps: Sequence[tuple[str, dict]]) -> str:
    """Command-line style name of a sequence of steps: ``punct+freq_norm+shuffle``."""
    return "+".join(name for name, _ in steps) or "none"
