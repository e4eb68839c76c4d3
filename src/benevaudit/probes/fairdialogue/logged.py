"""FairDialogue's answers read from an Inspect AI run of ``benevaudit/fairdialogue``
(``probe.answers.inspect_log``: a log file or a folder of logs, through Inspect's log API).

Each sample names its cell in its metadata (item, task, attribute, group) and the kind it asked
(decision or recommendation); its final assistant message is the answer, parsed and scored as
a CSV's answer is. A sample of another kind or of no cell, one with no reply, or a cell
answered twice (a second epoch, a log listed twice) is an error naming the log and the sample.
"""

from __future__ import annotations

from typing import Any

from benevaudit.errors import InputError
from benevaudit.replies import read_samples

OPTION = "probe.answers.inspect_log"
CELL = ("item", "task", "attribute", "group")


def log_rows(path: str, kind: str) -> list[dict[str, Any]]:
    """Rows ``{item, task, attribute, group, answer}`` of every sample, in log order."""
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], str] = {}
    for sample in read_samples(path, OPTION):
        where = f"{sample.log}: sample {sample.id} (epoch {sample.epoch})"
        meta = sample.metadata
        if any(not isinstance(meta.get(c), str) for c in CELL) or "kind" not in meta:
            raise InputError(f"{where}: its metadata names no FairDialogue cell ({list(CELL)}); "
                             "expected a log of benevaudit/fairdialogue")
        if meta["kind"] != kind:
            raise InputError(f"{where}: a {meta['kind']} sample, and probe.kind={kind}; score "
                             f"it with probe=fairdialogue_{meta['kind']}")
        cell = tuple(str(meta[c]) for c in CELL)
        if cell in seen:
            raise InputError(f"{where}: the cell is answered twice (first in {seen[cell]}; "
                             "several epochs, or a log listed twice?); score one answer per cell")
        replies = sample.replies
        if not replies:
            raise InputError(f"{where}: no assistant reply to score")
        seen[cell] = sample.log
        rows.append({**dict(zip(CELL, cell)), "answer": replies[-1]})
    if not rows:
        raise InputError(f"{OPTION}={path}: no sample to score")
    return rows
