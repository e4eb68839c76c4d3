"""Defaults live in one place, the YAML under conf/: a spec field is required, or absent
(``None``) where some options lack the key, and never holds a value of its own that a YAML
file could contradict."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

from pydantic_core import PydanticUndefined

import benevaudit
from benevaudit.specs import Spec


def spec_classes(base: type[Spec] = Spec) -> Iterator[type[Spec]]:
    for sub in base.__subclasses__():
        yield sub
        yield from spec_classes(sub)


def second_defaults(classes: list[type[Spec]]) -> list[str]:
    """``module.Class.field = value`` for each field defaulting to something other than
    absent: a second copy of what the YAML says."""
    found = []
    for cls in classes:
        for name, field in cls.model_fields.items():
            if field.default_factory is not None or (
                    field.default is not PydanticUndefined and field.default is not None):
                value = "a factory" if field.default_factory is not None else repr(field.default)
                found.append(f"{cls.__module__}.{cls.__qualname__}.{name} = {value}")
    return sorted(set(found))


def test_no_spec_field_holds_a_default_of_its_own() -> None:
    for module in pkgutil.walk_packages(benevaudit.__path__, "benevaudit."):
        importlib.import_module(module.name)
    classes = [c for c in spec_classes() if c.__module__.startswith("benevaudit.")]
    assert len(classes) > 40, "the spec classes were not all imported"
    found = second_defaults(classes)
    assert not found, ("spec fields with a default of their own (defaults live in conf/; "
                       "a field is required, or None where options lack the key):\n"
                       + "\n".join(found))


def test_the_check_finds_a_second_default() -> None:
    from typing import Optional

    class Twice(Spec):
        steps: int = 200
        seeds: list[int] = [0]
        absent: Optional[int] = None
        required: int

    found = second_defaults([Twice])
    assert [f.rsplit(".", 1)[1] for f in found] == ["seeds = [0]", "steps = 200"]
