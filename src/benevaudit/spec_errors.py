"""A spec's validation failure as one line a person can act on: the dotted key as written
(union tags left out), the value, and what was expected; an unknown key with its block, the
block's kind and the keys it takes; a kind no spec has with the valid kinds."""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel, Tag, ValidationError
from pydantic.fields import FieldInfo

from benevaudit.errors import BenevauditError, ConfigError


def failure(cls: type[BaseModel], error: ValidationError, key: str, data: Any
            ) -> BenevauditError:
    """The first error of a validation as one benevaudit error naming the key."""
    first = error.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, BenevauditError):          # a model_validator's own message
        return cause
    loc = [part for part in first["loc"]]
    if first["type"] == "extra_forbidden":
        return unknown_key(cls, key, loc, data)
    if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return bad_tag(cls, key, loc, first)
    field, depth = field_at(cls, loc)
    _, named = walk(cls, loc[:depth] if field is not None else loc)
    path = dotted(key, named)
    value = first["input"] if field is None or depth == len(loc) else given(data, named)
    if first["type"] == "missing":
        return ConfigError(f"{path} is required" + (f": expected {describe(field)}" if field else ""))
    if cause is not None:
        return ConfigError(f"{path}={value!r}: {cause}")
    return ConfigError(f"{path}={value!r}: expected {describe(field) if field else first['msg']}")


TAGS = ("family", "kind", "backend", "source")   # the fields that tell a block's kinds apart


def walk(cls: type[BaseModel], loc: list[Any]) -> tuple[Any, list[Any]]:
    """(the spec class that owns the last part of ``loc``, ``loc`` without union tags).

    pydantic puts the tag of a tagged union into an error's location (``probe.cobia.x``); the
    dotted key a person wrote has none (``probe.x``)."""
    model: Any = cls
    path: list[Any] = []
    annotation: Any = None
    for part in loc:
        members = union_members(annotation)
        if len(members) > 1 and isinstance(part, str) and is_tag(annotation, members, part):
            chosen = picked(annotation, members, part)
            annotation = chosen[0] if len(chosen) == 1 else Union[tuple(chosen)] if chosen else None
            model = chosen[0] if len(chosen) == 1 else None
            continue
        path.append(part)
        fields = getattr(model, "model_fields", None)
        if isinstance(part, str) and fields is not None and part in fields:
            annotation = fields[part].annotation
        elif get_origin(annotation) is dict or isinstance(part, int):
            args = get_args(unwrap(annotation)[0]) if annotation is not None else ()
            annotation = args[-1] if args else None
        else:
            annotation = None
        members = union_members(annotation)
        model = members[0] if len(members) == 1 else None
    return model, path


def union_members(annotation: Any) -> list[type[BaseModel]]:
    """The spec classes an annotation admits: ``X``, ``X | None``, a (tagged) union of them."""
    if annotation is None:
        return []
    if isinstance(annotation, type):
        return [annotation] if issubclass(annotation, BaseModel) else []
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        for member in union_members(arg):
            if member not in found:
                found.append(member)
    return found


def is_tag(annotation: Any, members: list[type[BaseModel]], part: str) -> bool:
    """Whether a location part picks a member of a union (its tag, or its class name where the
    union has no tag) rather than naming a field."""
    return bool(picked(annotation, members, part))


def picked(annotation: Any, members: list[type[BaseModel]], part: str) -> list[type[BaseModel]]:
    """The members of a union a location part picks: by ``Tag``, ``Literal`` tag or name."""
    tagged = tags_in(annotation)
    if part in tagged:
        return [tagged[part]]
    return [m for m in members if has_tag(m, part) or m.__name__ == part]


def tags_in(annotation: Any) -> dict[str, type[BaseModel]]:
    """``{tag: spec}`` of a union whose members are ``Annotated[spec, Tag(tag)]``."""
    found: dict[str, type[BaseModel]] = {}
    for arg in get_args(annotation):
        if get_origin(arg) is Annotated:
            inner, *meta = get_args(arg)
            for item in meta:
                if isinstance(item, Tag) and isinstance(inner, type):
                    found[item.tag] = inner
        found.update(tags_in(arg))
    return found


def has_tag(model: type[BaseModel], tag: str) -> bool:
    return any(tag in values for values in tag_values(model).values())


def tag_values(model: type[BaseModel]) -> dict[str, tuple[Any, ...]]:
    """A kind's tags: ``{"family": ("cobia",)}``, from its ``Literal`` tag fields."""
    found = {}
    for name in TAGS:
        field = model.model_fields.get(name)
        if field is not None and get_origin(unwrap(field.annotation)[0]) is Literal:
            found[name] = get_args(unwrap(field.annotation)[0])
    return found


def unknown_key(cls: type[BaseModel], key: str, loc: list[Any], data: Any) -> ConfigError:
    """``probe.max_tokns: unknown key in probe (family=cobia); valid keys: …``."""
    owner, path = walk(cls, loc[:-1])
    try:
        block = given(data, path)
    except (KeyError, IndexError, TypeError):
        block = None
    where = dotted(key, path) or "the config"
    full = dotted(key, [*path, loc[-1]])
    if owner is None:
        return ConfigError(f"{full}: unknown key in {where}")
    foreign = getattr(owner, "foreign_key", None)     # a key of another kind (llm backends)
    why = foreign(str(loc[-1]), full) if foreign is not None else None
    if why:
        return ConfigError(f"{full}: {why}")
    tags = ", ".join(f"{name}={block[name]}" for name in tag_values(owner)
                     if isinstance(block, dict) and name in block)
    valid = sorted(f.alias or name for name, f in owner.model_fields.items())
    return ConfigError(f"{full}: unknown key in {where}{f' ({tags})' if tags else ''}; valid "
                       f"keys: {', '.join(valid)}")


def bad_tag(cls: type[BaseModel], key: str, loc: list[Any], first: Any) -> ConfigError:
    """A kind no spec has: ``detector.kind='x': expected one of [...]``."""
    ctx = first.get("ctx") or {}
    tag = str(ctx.get("discriminator", "kind")).strip("'")
    named = tag.removesuffix("()")                   # a callable discriminator: its name
    tag = named if named in TAGS else tag if tag.isidentifier() else "kind"
    _, path = walk(cls, loc)
    expected = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",")]
    where = dotted(key, [*path, tag])
    if first["type"] == "union_tag_not_found":
        return ConfigError(f"{where} is required: expected one of {expected}")
    return ConfigError(f"{where}={ctx.get('tag')!r}: expected one of {expected}")


def given(data: Any, loc: list[Any]) -> Any:
    """The value passed at ``loc``: the whole list when the error is about one of its items."""
    for part in loc:
        data = data[part]
    return data


def field_at(cls: type[BaseModel], loc: list[Any]) -> tuple[FieldInfo | None, int]:
    """The field an error's location points at, and how many location parts name it (a union's
    tag counts as a part)."""
    members: list[type[BaseModel]] = [cls]
    annotation: Any = cls
    field = None
    for depth, part in enumerate(loc):
        if len(members) > 1 and isinstance(part, str) and is_tag(annotation, members, part):
            members = picked(annotation, members, part)
            continue
        fields = members[0].model_fields if len(members) == 1 else None
        if not isinstance(part, str) or fields is None or part not in fields:
            return field, depth
        field = fields[part]
        annotation = field.annotation
        members = union_members(annotation)
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

