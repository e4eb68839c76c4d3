"""Typed specs: each family's config block, validated where the family lives.

A spec is a pydantic model of one block (``model``, ``data``, ``detector``, ``probe``, …). Its
fields say the type and the valid range of every value the family reads; the YAML under
``conf/`` holds the defaults, so a field has none unless some options lack the key. Such a field
defaults to ``None`` (absent); it admits an explicit ``null`` only when its type says so
(``Optional[...]``), since pydantic does not validate defaults.
A key a spec does not name is refused (``extra="forbid"``), added with ``+`` or not: the error
names the key, its block and the keys that block takes. A block with kinds (``probe``,
``detector``, ``generator``, ``data``) is a union of one spec per kind told apart by a
``Literal`` tag (``family``, ``kind``), so each kind lists only its own keys.
Validation is strict: ``2.5`` is no integer, ``"nope"`` no flag.

:meth:`Spec.of` validates a plain dict and turns the first failure into one
:class:`~benevaudit.errors.ConfigError` that names the dotted key, the value and what was
expected (``optim.lr=-1: expected a number > 0``), the line an entrypoint prints before exiting
with code 2. Checks across fields, or of files, are ``model_validator``s that raise benevaudit's
own errors, which reach the caller unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from typing_extensions import Self

from benevaudit.spec_errors import failure

PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]            # [0, 1]
Share = Annotated[float, Field(gt=0, le=1)]               # (0, 1]: a share that cannot be empty
SequenceLength = Annotated[int, Field(ge=3, le=512)]      # tokens incl. [CLS]/[SEP]: BERT's positions


class Spec(BaseModel):
    """One config block, typed. Subclasses list the keys their family reads."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    @classmethod
    def of(cls, data: Any, key: str = "") -> Self:
        """The validated spec of ``data`` (a plain dict), found at dotted ``key`` of the run's
        config (``""`` for the whole config)."""
        try:
            return cls.model_validate(data if data is not None else {})
        except ValidationError as e:
            raise failure(cls, e, key, data) from None


ELSEWHERE = ("task_name", "paths", "logger", "hydra")   # top-level keys read outside a run spec


class RunSpec(Spec):
    """An entrypoint's whole config: every top-level key but those read where they are used
    (``ELSEWHERE``: the run directory's ``paths``, the ``logger``, Hydra's own)."""

    @model_validator(mode="before")
    @classmethod
    def drop_elsewhere(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in ELSEWHERE}
        return data
