"""Typed specs: each family's config block, validated where the family lives.

A spec is a pydantic model of one block (``model``, ``data``, ``detector``, ``probe``, …). Its
fields say the type and the valid range of every value the family reads; the YAML under
``conf/`` holds the defaults, so a field has none unless some options lack the key. Such a field
defaults to ``None`` (absent); it admits an explicit ``null`` only when its type says so
(``Optional[...]``), since pydantic does not validate defaults.
Keys a spec does not name pass through untouched (``extra="allow"``), so an option may carry
what only its own code reads. Validation is strict: ``2.5`` is no integer, ``"nope"`` no flag.

:meth:`Spec.of` validates a plain dict and turns the first failure into one
:class:`~benevaudit.errors.ConfigError` that names the dotted key, the value and what was
expected (``optim.lr=-1: expected a number > 0``), the line an entrypoint prints before exiting
with code 2. Checks across fields, or of files, are ``model_validator``s that raise benevaudit's
own errors, which reach the caller unchanged.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from typing_extensions import Self

from benevaudit.errors import BenevauditError, ConfigError

PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]            # [0, 1]
Share = Annotated[float, Field(gt=0, le=1)]               # (0, 1]: a share that cannot be empty
SequenceLength = Annotated[int, Field(ge=3, le=512)]      # tokens incl. [CLS]/[SEP]: BERT's positions


class Spec(BaseModel):
    """One config block, typed. Subclasses list the keys their family reads."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, allow_inf_nan=False)

    @classmethod
    def of(cls, data: Any, key: str = "") -> Self:
        """The validated spec of ``data`` (a plain dict), found at dotted ``key`` of the run's
        config (``""`` for the whole config)."""
        try:
            return cls.model_validate(data if data is not None else {})
        except ValidationError as e:
            raise failure(cls, e, key, data) from None

    def as_dict(self) -> dict[str, Any]:
        """The block as given (validated), for code that takes plain values: keys the config
        lacked stay absent."""
        return self.model_dump(exclude_unset=True)


def failure(cls: type[BaseModel], error: ValidationError, key: str, data: Any
            ) -> BenevauditError:
    """The first error of a validation as one benevaudit error naming the key."""
    first = error.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, BenevauditError):          # a model_validator's own message
        return cause
    loc = [part for part in first["loc"]]
    field, depth = field_at(cls, loc)
    path = dotted(key, loc[:depth] if field is not None else loc)
    value = first["input"] if field is None or depth == len(loc) else given(data, loc[:depth])
    if first["type"] == "missing":
        return ConfigError(f"{path} is required" + (f": expected {describe(field)}" if field else ""))
    if cause is not None:
        return ConfigError(f"{path}={value!r}: {cause}")
    if first["type"] == "extra_forbidden":
        return ConfigError(f"{path}: unknown key")
    return ConfigError(f"{path}={value!r}: expected {describe(field) if field else first['msg']}")


def given(data: Any, loc: list[Any]) -> Any:
    """The value passed at ``loc``: the whole list when the error is about one of its items."""
    for part in loc:
        data = data[part]
    return data


def field_at(cls: type[BaseModel], loc: list[Any]) -> tuple[FieldInfo | None, int]:
    """The field an error's location points at, and how many location parts name it."""
    model: Any = cls
    field = None
    for depth, part in enumerate(loc):
        fields = getattr(model, "model_fields", None)
        if not isinstance(part, str) or fields is None or part not in fields:
            return field, depth
        field = fields[part]
        model = spec_class(field.annotation)
    return field, len(loc)


def spec_class(annotation: Any) -> Any:
    """The spec class inside ``X``, ``X | None`` or ``Annotated[X, …]``, else None."""
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def dotted(key: str, loc: list[Any]) -> str:
    path = key
    for part in loc:
        path = f"{path}[{part}]" if isinstance(part, int) else f"{path}.{part}" if path else part
    return path


def describe(field: FieldInfo) -> str:
    """What a field accepts, in words: "a positive integer", "a number in [0, 1) or null"."""
    if field.description:
        return field.description
    kind, nullable = unwrap(field.annotation)
    metadata = list(field.metadata)
    if get_origin(kind) is Annotated:                 # Optional[PositiveInt] and the like
        kind, *extra = get_args(kind)
        for item in extra:
            metadata += getattr(item, "metadata", [item])
    return kind_words(kind, bounds(metadata)) + (" or null" if nullable else "")


def unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without ``None``, whether ``None`` is allowed)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        inner = args[0] if len(args) == 1 else Union[tuple(args)]
        return inner, len(args) < len(get_args(annotation))
    return annotation, False


def bounds(metadata: list[Any]) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in metadata:
        for name in ("gt", "ge", "lt", "le"):
            if isinstance(item, getattr(at, name.title())):
                found[name] = getattr(item, name)
    return found


def kind_words(kind: Any, limits: dict[str, float]) -> str:
    if kind is bool:
        return "true or false"
    if get_origin(kind) is Literal:
        return f"one of {list(get_args(kind))}"
    if kind is str:
        return "a string"
    if kind not in (int, float):
        return f"a value of type {getattr(kind, '__name__', kind)}"
    low = limits.get("ge", limits.get("gt"))
    high = limits.get("le", limits.get("lt"))
    if kind is int and high is None and low in (0, 1) and "gt" not in limits:
        return "a positive integer" if low == 1 else "a non-negative integer"
    words = "an integer" if kind is int else "a number"
    if low is not None and high is not None:
        return (f"{words} in {'(' if 'gt' in limits else '['}{low:g}, "
                f"{high:g}{')' if 'lt' in limits else ']'}")
    if low is not None:
        return f"{words} {'>' if 'gt' in limits else '>='} {low:g}"
    if high is not None:
        return f"{words} {'<' if 'lt' in limits else '<='} {high:g}"
    return words

