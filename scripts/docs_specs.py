"""What the typed specs say about a config key, for the reference pages: its type in words, its
allowed values, the spec class of a block (a union of kinds resolved by the block's own tags),
and the comments the spec's source gives each field.

Read from the pydantic models themselves (``model_fields``: annotations and constraints) and
from their source (``tokenize``: the comment after a field, or the lines above it).
"""

from __future__ import annotations

import inspect
import io
import tokenize
import types
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal, NamedTuple, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from benevaudit.specs import Spec


class TypeInfo(NamedTuple):
    """A leaf's type in words (``int ≥ 1 or null``) and its allowed values, where closed."""

    text: str
    allowed: tuple[Any, ...] | None


BOUNDS = ((at.Ge, "≥", "ge"), (at.Gt, ">", "gt"), (at.Le, "≤", "le"), (at.Lt, "<", "lt"))
NAMES = {bool: "bool", int: "int", float: "number", str: "string", type(None): "null"}


def split_annotated(annotation: Any) -> tuple[Any, list[Any], str | None]:
    """(the bare type, its constraints, its ``Field`` description) of an ``Annotated`` one."""
    metadata: list[Any] = []
    description = None
    while get_origin(annotation) is typing.Annotated:
        annotation, *extra = get_args(annotation)
        for item in extra:
            if isinstance(item, FieldInfo):
                metadata += item.metadata
                description = description or item.description
            else:
                metadata.append(item)
    return annotation, metadata, description


def is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def members(annotation: Any) -> list[Any]:
    """The members of a (possibly nested, possibly annotated) union, flattened."""
    bare, _, _ = split_annotated(annotation)
    if is_union(bare):
        return [m for arg in get_args(bare) for m in members(arg)]
    return [bare]


def spec_class(annotation: Any) -> type[Spec] | None:
    bare, _, _ = split_annotated(annotation)
    return bare if inspect.isclass(bare) and issubclass(bare, BaseModel) else None


def literal_fields(cls: type[BaseModel]) -> dict[str, tuple[Any, ...]]:
    """The fields whose values are a closed choice (``Literal``), with the values they take."""
    found = {}
    for name, info in cls.model_fields.items():
        bare, _, _ = split_annotated(info.annotation)
        if get_origin(bare) is Literal:
            found[info.alias or name] = get_args(bare)
    return found


def owner_of(cls: type[BaseModel], annotation: Any, key: str) -> type[BaseModel] | None:
    """The member of ``annotation``'s union that reads ``key``: ``cls`` where it does, else,
    for a kind that takes other kinds' keys while they say nothing (an ``llm`` block's other
    backends, ``probe.audio``'s other sources: ``foreign_key``), the kind whose key it is."""
    if field_info(cls, key) is not None or not hasattr(cls, "foreign_key"):
        return cls
    return next((c for c in (spec_class(m) for m in members(annotation))
                 if c is not None and field_info(c, key) is not None), None)


def tag_choices(annotation: Any, key: str) -> tuple[Any, ...]:
    """Every value a union's tag ``key`` takes over its members (``probe.audio.source``)."""
    found: list[Any] = []
    for cls in (spec_class(m) for m in members(annotation)):
        for value in (literal_fields(cls).get(key, ()) if cls is not None else ()):
            if value not in found:
                found.append(value)
    return tuple(found)


def keys_of(cls: type[BaseModel]) -> set[str]:
    """The keys a spec reads (a field's alias where it has one: ``flips.with``)."""
    return {info.alias or name for name, info in cls.model_fields.items()}


def block_spec(annotation: Any, value: Any) -> type[Spec] | None:
    """The spec class that reads ``value`` (a dict) under ``annotation``: among the kinds whose
    closed-choice fields all admit the block's values and whose keys hold the block's, the one
    told apart by the most single-valued tags (``family: fairdialogue``, ``kind: decision``)."""
    if not isinstance(value, Mapping):
        return None
    classes = [c for c in (spec_class(m) for m in members(annotation)) if c is not None]
    every = set().union(*map(keys_of, classes)) if classes else set()
    fitting = [c for c in classes
               if set(value) <= (every if hasattr(c, "foreign_key") else keys_of(c))
               and all(value[k] in allowed for k, allowed in literal_fields(c).items()
                       if k in value and isinstance(value[k], str) and value[k] != "???")]
    if not fitting:
        return classes[0] if len(classes) == 1 else None
    return max(fitting, key=lambda c: sum(len(a) == 1 and value.get(k) == a[0]
                                          for k, a in literal_fields(c).items()))


def field_info(cls: type[BaseModel], key: str) -> tuple[str, FieldInfo] | None:
    """(the field's name, its info) for a key of the block, its alias included."""
    for name, info in cls.model_fields.items():
        if key in (name, info.alias):
            return name, info
    return None


def mapping_values(annotation: Any) -> Any | None:
    """The value type of a ``dict[str, X]`` (optional or not), else None."""
    for member in members(annotation):
        if get_origin(member) in (dict, Mapping) or member is dict:
            args = get_args(member)
            return args[1] if len(args) == 2 else Any
    return None


def bounds(metadata: list[Any]) -> str:
    words = []
    for item in metadata:
        for kind, sign, attr in BOUNDS:
            if isinstance(item, kind):
                words.append(f"{sign} {getattr(item, attr)}")
        if isinstance(item, at.MinLen) and item.min_length:
            words.append("non-empty" if item.min_length == 1 else f"≥ {item.min_length} items")
    return " ".join(words)


def type_info(annotation: Any, metadata: Sequence[Any] = ()) -> TypeInfo:
    """The type of a leaf in words, and its allowed values where it is a closed choice."""
    bare, extra, _ = split_annotated(annotation)
    metadata = [*metadata, *extra]
    if is_union(bare):
        parts = [type_info(m) for m in get_args(bare)]
        allowed = [a for p in parts for a in (p.allowed or ())]
        text = " or ".join(dict.fromkeys(p.text for p in parts))
        return TypeInfo(text, tuple(allowed) if allowed else None)
    origin = get_origin(bare)
    if origin is Literal:
        return TypeInfo("choice", get_args(bare))
    if origin in (list, Sequence, tuple) or bare in (list, tuple):
        args = get_args(bare)
        item = type_info(args[0]) if args else TypeInfo("any", None)
        limit = bounds(metadata)
        items = "choices" if item.text == "choice" else item.text
        return TypeInfo(f"{limit + ' ' if limit else ''}list of {items}", item.allowed)
    if origin in (dict, Mapping) or bare is dict:
        args = get_args(bare)
        value = type_info(args[1]).text if len(args) == 2 else "any"
        return TypeInfo(f"mapping of string to {value}", None)
    if spec_class(bare) is not None:
        return TypeInfo("block", None)
    name = NAMES.get(bare, "any" if bare is Any else getattr(bare, "__name__", str(bare)))
    limit = bounds(metadata)
    return TypeInfo(f"{name} {limit}".strip(), None)


def field_type(cls: type[BaseModel], name: str) -> TypeInfo:
    info = cls.model_fields[name]
    return type_info(info.annotation, info.metadata)


def field_description(cls: type[BaseModel], name: str) -> str | None:
    """A field's ``Field(description=...)``, where it has one (it says what a value must be)."""
    info = cls.model_fields[name]
    if info.description:
        return info.description
    return split_annotated(info.annotation)[2] if info.annotation is not None else None


def field_comment(cls: type[BaseModel], name: str) -> str:
    """The comment the spec's source gives ``name``, from the class that declares it."""
    for klass in cls.__mro__:
        if isinstance(klass, type) and issubclass(klass, BaseModel):
            found = _class_comments(klass).get(name)
            if found:
                return found
    return ""


def class_summary(cls: type[BaseModel]) -> str:
    """The first sentence-paragraph of a spec class's own docstring (never an inherited one)."""
    doc = cls.__dict__.get("__doc__") or ""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else ""


@cache
def _class_comments(cls: type) -> dict[str, str]:
    """``{field: comment}`` of one class body: the comment on a field's line (and comment lines
    that continue it, indented under it) or else the comment lines just above it, unless those
    are a one- or two-word heading over a group of fields (``# vllm``)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    found: dict[str, str] = {}
    above: list[str] = []
    last: str | None = None
    for line in source.splitlines()[1:]:
        text = line.strip()
        if text.startswith("#"):
            body = text.lstrip("#")
            if last is not None and body.startswith("   "):      # continues the field's comment
                found[last] = f"{found.get(last, '')} {body.strip()}".strip()
            else:
                above.append(body.strip())
                last = None
            continue
        name = _field_name(text)
        if name is None:
            above, last = [], None
            continue
        comment = _trailing_comment(line)
        heading = len(" ".join(above).split()) <= 2
        text_above = "" if heading else " ".join(above)
        if comment or text_above:
            found[name] = comment or text_above
        above, last = [], (name if comment else None)
    return found


def _field_name(text: str) -> str | None:
    head = text.split(":", 1)[0]
    if ":" in text and head.isidentifier() and not text.startswith(("def ", "class ", "@")):
        return head
    return None


def _trailing_comment(line: str) -> str:
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
            if token.type == tokenize.COMMENT:
                return token.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ""
    return ""
