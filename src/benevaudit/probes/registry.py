"""Which probe a ``probe`` spec names: ``probe.family``, and for FairDialogue ``probe.kind``.

The registry (``PROBES``, a :class:`benevaudit.registry.Registry`) is read from the modules
under ``probes/``: every :class:`Probe` subclass that sets ``family`` registers itself with its
spec (``class Decision(Probe[DecisionSpec])``), so adding a probe kind adds one module and one
YAML (and its report section). ``ProbeSpec``, the type of a ``probe`` block, is made from the
registered specs: told apart by ``family``, and a family of several kinds by ``kind``. It
refuses a family or kind it lacks as the config is validated; the registry refuses one no
module implements."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field

from benevaudit.errors import ConfigError
from benevaudit.probes.base import PROBES, Probe
from benevaudit.specs import Spec

if TYPE_CHECKING:
    from benevaudit.probes.fairmt.spec import FairMTSpec
    from benevaudit.probes.spec import CobiaSpec, DecisionSpec, FeedbackSpec, RecommendationSpec

    ProbeSpec = Union[CobiaSpec, DecisionSpec, RecommendationSpec, FeedbackSpec, FairMTSpec]

__all__ = ["PROBES", "ProbeSpec", "build", "probe_union", "probes"]


def probe_union() -> Any:
    """The type of a ``probe`` block: each registered family's spec, or for a family of several
    kinds (``family/kind`` keys) the union of their specs told apart by ``kind``; the families
    told apart by ``family``. Families and kinds in name order."""
    families: dict[str, dict[str, type[Spec]]] = {}
    for key, spec in PROBES.specs().items():
        family, _, kind = key.partition("/")
        families.setdefault(family, {})[kind] = spec
    return _union(tuple((f, tuple(sorted(kinds.items()))) for f, kinds in sorted(families.items())))


@cache
def _union(families: tuple[tuple[str, tuple[tuple[str, type[Spec]], ...]], ...]) -> Any:
    members: list[Any] = []
    for _, kinds in families:
        specs = tuple(spec for _, spec in kinds)
        members.append(specs[0] if [k for k, _ in kinds] == [""] else
                       Annotated[Union[specs], Field(discriminator="kind")])
    return Annotated[Union[tuple(members)], Field(discriminator="family")]


def __getattr__(name: str) -> Any:
    """``ProbeSpec``: :func:`probe_union`, once the probe modules are read."""
    if name == "ProbeSpec":
        return probe_union()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def probes() -> dict[tuple[str, str | None], type[Probe]]:
    """(probe.family, probe.kind) -> the probe, from every module of the package (and of any
    package ``PROBES.include`` adds)."""
    PROBES.refresh()
    classes = [entry.builder() for entry in PROBES.entries().values()]
    found = {(cls.family, cls.kind): cls for cls in classes}
    return dict(sorted(found.items(), key=lambda item: (item[0][0], item[0][1] or "")))


def build(spec: ProbeSpec) -> Probe[ProbeSpec]:
    """The probe of a validated ``probe`` spec; a family or kind that no module implements is
    an error naming those that exist."""
    known = probes()
    kinds = [k for f, k in known if f == spec.family]
    kind = None if kinds == [None] else getattr(spec, "kind", None)   # CoBia, FairMT: no kind
    if (spec.family, kind) not in known:
        raise ConfigError(f"probe {spec.family}/{kind}: no probe module implements it; "
                          f"implemented: {[f'{f}/{k}' for f, k in known]}")
    return known[spec.family, kind](spec)
