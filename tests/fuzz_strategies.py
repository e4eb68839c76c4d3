"""Hypothesis strategies for the fuzz tier: a valid file or reply, spoilt in the ways disks,
editors, proxies and faulty servers spoil them, and the settings every fuzz test runs under.

The default tier runs a few examples per reader, derandomized (the same examples on every run,
so CI never flakes on a new one); ``make test-fuzz`` sets ``BENEVAUDIT_FUZZ_EXAMPLES`` and runs
that many fresh random examples per reader.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from benevaudit.errors import BenevauditError

EXAMPLES = int(os.environ.get("BENEVAUDIT_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(max_examples=EXAMPLES or 12, deadline=None, database=None,
                derandomize=not EXAMPLES, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPOILS = ("cut", "insert", "flip", "splice", "junk", "empty", "nul", "latin-1", "bom", "crlf")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=8)


@st.composite
def spoilt(draw: st.DrawFn, valid: bytes) -> bytes:
    """``valid`` cut short, with bytes inserted, flipped or spliced in, replaced by junk,
    emptied, given a NUL, re-encoded as Latin-1, a BOM or Windows line ends."""
    kind = draw(st.sampled_from(SPOILS))
    at = draw(st.integers(0, len(valid)))
    if kind == "cut":
        return valid[:at]
    if kind == "insert":
        return valid[:at] + draw(st.binary(min_size=1, max_size=16)) + valid[at:]
    if kind == "flip" and valid:
        spot = min(at, len(valid) - 1)
        return valid[:spot] + bytes([valid[spot] ^ draw(st.integers(1, 255))]) + valid[spot + 1:]
    if kind == "splice":
        end = draw(st.integers(at, len(valid)))
        text = draw(st.text(max_size=16)).encode("utf-8")
        return valid[:at] + text + valid[end:]
    if kind == "junk":
        return draw(st.binary(max_size=64))
    if kind == "nul":
        return valid[:at] + b"\x00" + valid[at:]
    if kind == "latin-1":
        return valid.decode("utf-8", "replace").encode("latin-1", "replace") + "é".encode(
            "latin-1")
    if kind == "bom":
        return b"\xef\xbb\xbf" + valid
    if kind == "crlf":
        return valid.replace(b"\n", b"\r\n")
    return b""


def _slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (keys and list positions), the value itself first."""
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _slots(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _slots(item, path + (i,))
    return out


def _changed(value: Any, path: tuple[Any, ...], new: Any, drop: bool) -> Any:
    """A copy of ``value`` with the slot at ``path`` set to ``new`` or removed."""
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    owner = copy
    for key in path[:-1]:
        owner = owner[key]
    if drop:
        del owner[path[-1]]
    else:
        owner[path[-1]] = new
    return copy


@st.composite
def spoilt_json(draw: st.DrawFn, valid: Any) -> bytes:
    """``valid`` (a JSON value) with one slot replaced by any JSON value or removed, or its
    serialized bytes spoilt as a file's are."""
    kind = draw(st.sampled_from(("replace", "drop", "bytes")))
    if kind == "bytes":
        return draw(spoilt(json.dumps(valid).encode("utf-8")))
    path = draw(st.sampled_from(_slots(valid)[1 if kind == "drop" else 0:] or [()]))
    changed = _changed(valid, path, draw(JSON_VALUES), drop=kind == "drop" and bool(path))
    return json.dumps(changed).encode("utf-8")


def one_line(error: BenevauditError, *secrets: str) -> str:
    """The error's message, checked: one line, not empty, quoting none of ``secrets``."""
    message = str(error)
    assert message.strip() and "\n" not in message and "\r" not in message, repr(message)
    assert not any(s in message for s in secrets), message
    return message
