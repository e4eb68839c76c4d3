"""Each intervention's parameters, typed: what ``intervention.steps.<name>`` may hold.

A step's spec lists its intervention's parameters (the fields of its dataclass, a test keeps
the two equal), so a misspelt or ill-typed parameter fails at the entrance with its dotted key
(``intervention.steps.mask.k=-3: expected a positive integer or null``). :func:`build_steps`
turns the typed steps into the interventions that run, once per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Union

from benevaudit.audit.interventions.base import Intervention
from benevaudit.audit.interventions.registry import INTERVENTIONS, check_name
from benevaudit.audit.lexicon import Lexicon
from benevaudit.errors import ConfigError
from benevaudit.specs import Fraction, NonNegativeInt, PositiveInt, Spec


class NoParams(Spec):
    """``shuffle``, ``none``: no parameter."""


class PunctStep(Spec):
    fold_apostrophes: bool        # true: every apostrophe folds (don't -> don.t)


class LexiconStep(Spec):
    """``mask``, ``random_mask``, ``freq_norm``: the top-k words per class they read."""

    k: Optional[PositiveInt]      # null: every word of the lexicon


class SymInjectStep(LexiconStep):
    rate: Fraction                # n = min(round(rate * L), max_per_turn) per agent turn
    max_per_turn: NonNegativeInt


StepParams = Union[PunctStep, SymInjectStep, LexiconStep, NoParams]
STEP_SPECS: dict[str, type[Spec]] = {
    "none": NoParams, "punct": PunctStep, "mask": LexiconStep, "shuffle": NoParams,
    "freq_norm": LexiconStep, "sym_inject": SymInjectStep, "random_mask": LexiconStep,
}


def typed_steps(steps: Any) -> Any:
    """``intervention.steps`` with each step's parameters read by its spec, in the order
    given; an unknown step lists the valid names."""
    if not isinstance(steps, Mapping):
        return steps                  # the field's own type check says what is expected
    out: dict[str, Spec] = {}
    for name, params in steps.items():
        check_name(str(name))
        if isinstance(params, Spec):
            out[str(name)] = params
            continue
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(f"intervention.steps.{name}: parameters must be a mapping or "
                              f"null, got {params!r}")
        out[str(name)] = STEP_SPECS[str(name)].of(dict(params or {}),
                                                  f"intervention.steps.{name}")
    return out


def build_steps(steps: Mapping[str, Spec], lexicon: Lexicon | None) -> list[Intervention]:
    """The interventions that run, in order (``none`` is no step), each built once with the
    one lexicon read for the run."""
    return [INTERVENTIONS[name](lexicon=lexicon, **params.model_dump())
            for name, params in steps.items() if name != "none"]
