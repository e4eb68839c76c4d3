"""Release files read as code go through the project's readers: a FairMT-Bench script
(``code/*.py``, parsed with ``ast`` and ``tokenize``) or a CoBia rater notebook that is empty,
binary, not UTF-8, cut off or of another shape is one error line naming the file, never a
traceback and never its text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benevaudit.errors import InputError
from benevaudit.probes.cobia import release_raters
from benevaudit.probes.fairmt.release import GENERATOR, SCRIPTS
from benevaudit.probes.fairmt.scripts import paper_prompt, read_generation, read_script
from benevaudit.outputs.stand_in_files import write_files
from benevaudit.probes.fairmt.stand_in import stand_in_files
from test_cobia_release import make_clone

TASK = "Negative_Feedback"         # its script also holds the paper's commented prompt
SPOILT = {
    "empty": (b"", "the file is empty"),
    "blank": (b"\n  \n", "holds only blank space"),
    "binary": (b"system_message = 'a'\x00\x01\x02\n", "binary data (a NUL byte)"),
    "latin-1": ("system_message = 'déjà'\n".encode("latin-1"), "line 1: not UTF-8 text"),
    "random": (bytes(range(256)) * 4, "not UTF-8 text"),
    "cut off": (b"system_message = (\n  'a secret view'\n", "not Python"),
    "nested": (b"x = " + b"(" * 400 + b")" * 400 + b"\n", "not Python"),
}
READERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "judge script": (SCRIPTS[TASK], lambda root: read_script(root, TASK)),
    "paper prompt": (SCRIPTS[TASK], paper_prompt),
    "generation script": (GENERATOR, read_generation),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("spoil", list(SPOILT))
def test_a_spoilt_fairmt_script_is_one_line_naming_it(reader: str, spoil: str,
                                                      tmp_path) -> None:
    root = write_files(tmp_path / "clone", stand_in_files())
    name, read = READERS[reader]
    data, says = SPOILT[spoil]
    (root / "code" / name).write_bytes(data)
    with pytest.raises(InputError) as err:
        read(root)
    message = str(err.value)
    assert str(root / "code" / name) in message and "\n" not in message, message
    assert says in message or (reader, spoil) == ("paper prompt", "nested") and \
        "no commented `# system_message" in message, message     # tokenize reads any depth
    assert "déjà" not in message and "secret view" not in message


def test_the_stand_in_scripts_still_read(tmp_path) -> None:
    root = write_files(tmp_path / "clone", stand_in_files())
    assert read_script(root, TASK).phrases and paper_prompt(root).startswith("Stand-in")
    assert read_generation(root).system


NOTEBOOK = "bias-judge.ipynb"


def notebook(cells: object) -> bytes:
    return json.dumps({"cells": cells, "nbformat": 4}).encode()


NOTEBOOKS = {
    "empty": (b"", "the file is empty"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    "latin-1": ('{"cells": ["déjà"]}'.encode("latin-1"), "not UTF-8 text"),
    "cut off": (notebook([])[:9], "not valid JSON"),
    "a list": (b"[1, 2]", "not a Jupyter notebook"),
    "cells an object": (notebook({"0": "x"}), "not a Jupyter notebook"),
    "source a number": (notebook([{"cell_type": "code", "source": 7}]),
                        "code cell 0: 'source' is not text"),
    "a NUL in the source": (notebook([{"cell_type": "code", "source": ["x = '\x00'"]}]),
                            "code cell 0 is not Python"),
    "not Python": (notebook([{"cell_type": "code", "source": ["template = ("]}]),
                   "code cell 0 is not Python"),
}


@pytest.mark.parametrize("spoil", list(NOTEBOOKS))
def test_a_spoilt_cobia_notebook_is_one_line_naming_it(spoil: str, tmp_path) -> None:
    judges = make_clone(tmp_path).joinpath("judges")
    data, says = NOTEBOOKS[spoil]
    (judges / NOTEBOOK).write_bytes(data)
    release_raters._cells.cache_clear()
    with pytest.raises(InputError) as err:
        release_raters.rater_text(judges, "bias")
    message = str(err.value)
    assert str(judges / NOTEBOOK) in message and says in message, message
    assert "\n" not in message and "déjà" not in message
