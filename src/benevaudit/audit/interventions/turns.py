"""The turns of an Arrow batch as flat columns, and putting edited texts back.

Interventions never build one Python dict per dialogue: they read ``turns.text`` as one flat
string array, use the list offsets to know which dialogue and position each turn has, edit
the flat array with Arrow kernels and numpy, and rebuild the list column around it. Every
intervention keeps the number, order and speakers of turns, so only the text child changes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.schema import TURN_TYPE

REQUIRED_FIELDS: dict[str, pa.DataType] = {
    "id": pa.string(), "label": pa.string(), "turns": pa.list_(TURN_TYPE),
}


class TurnView(NamedTuple):
    """Flat turns of one batch; every array is indexed by turn unless said otherwise."""

    text: pa.StringArray       # [T] turn texts
    is_agent: np.ndarray       # [T] bool
    dialogue: np.ndarray       # [T] int64 row of the turn's dialogue within the batch
    position: np.ndarray       # [T] int64 index of the turn within its dialogue
    offsets: np.ndarray        # [R+1] int64 first turn of each row, from 0


def check_schema(schema: pa.Schema) -> None:
    """Fail early, naming the field, when a table is not in the corpus' Arrow form."""
    for name, dtype in REQUIRED_FIELDS.items():
        idx = schema.get_field_index(name)
        if idx < 0:
            raise ValueError(f"interventions need a corpus table with field {name!r} "
                             f"(benevaudit.schema.ARROW_SCHEMA); fields present: {schema.names}")
        if not schema.field(idx).type.equals(dtype):
            raise ValueError(f"field {name!r} has type {schema.field(idx).type}, expected {dtype} "
                             "(benevaudit.schema.ARROW_SCHEMA)")


def view_turns(batch: pa.RecordBatch) -> TurnView:
    turns = batch.column("turns")
    if turns.null_count:
        row = int(np.flatnonzero(turns.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"row {row} (id {batch.column('id')[row].as_py()!r}): turns is null; "
                         "every dialogue needs at least one turn")
    offsets = turns.offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]                              # [R+1] a sliced batch starts past 0
    flat = turns.flatten()                                     # StructArray [T]
    counts = np.diff(offsets)                                  # [R]
    dialogue = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    position = np.arange(len(flat), dtype=np.int64) - offsets[:-1][dialogue]
    speaker = flat.field("speaker")
    is_agent = pc.fill_null(pc.equal(speaker, "agent"), False).to_numpy(zero_copy_only=False)
    text = pc.fill_null(flat.field("text"), "")
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    return TurnView(text, is_agent, dialogue, position, offsets)


def with_texts(batch: pa.RecordBatch, view: TurnView, text: pa.Array) -> pa.RecordBatch:
    """``batch`` with every turn's text replaced by ``text`` (same length and order)."""
    if len(text) != len(view.text):
        raise AssertionError(f"edited {len(text)} turns, expected {len(view.text)}")
    flat = batch.column("turns").flatten()
    struct = pa.StructArray.from_arrays([flat.field("speaker"), text.cast(pa.string())],
                                        fields=list(TURN_TYPE))
    turns = pa.ListArray.from_arrays(pa.array(view.offsets, pa.int32()), struct,
                                     type=pa.list_(TURN_TYPE))
    idx = batch.schema.get_field_index("turns")
    return batch.set_column(idx, batch.schema.field(idx), turns)


def scatter_texts(view: TurnView, rows: np.ndarray, edited: pa.Array) -> pa.StringArray:
    """All turn texts, with the turns at indices ``rows`` (sorted) replaced by ``edited``."""
    if len(rows) == len(view.text):
        return edited
    mask = np.zeros(len(view.text), dtype=bool)
    mask[rows] = True
    return pc.replace_with_mask(view.text, pa.array(mask), edited.cast(pa.string()))
