"""What ran (every run's ``run.json``): the entrypoint, how it ended, the machine, the package
versions, and what in it stood in for the study's models and data.

The section comes last; the marks in every other section send a reader to it, to see whether
the figures test the code path (the embedded LLM in place of an 8B guard, the packaged encoder
in place of bert-base, the scripted corpus) or the study's claim. Rows of other sections from such runs carry
:data:`~benevaudit.report.stand_ins.MARK`.
"""

from __future__ import annotations

from collections.abc import Sequence

from benevaudit.report.context import Context
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.record import FROM_HYDRA
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import NOTE, stand_ins

KEY = "what_ran"
TITLE = "What ran"
ORDER = 999
HEADERS = ["Run", "Entrypoint", "Ended", "Machine", "torch", "transformers", "Stand-ins"]


def claims(run: Run) -> bool:
    return run.record is not None


def row(run: Run) -> list[object]:
    record = run.record
    assert record is not None
    if record.schema_version == FROM_HYDRA:
        when, machine = "—", "unknown (no run.json)"
    else:
        when, machine = record.ended or "—", record.machine.describe() or "unknown"
    return [run.name, record.entrypoint, when, machine, record.versions.get("torch", "—"),
            record.versions.get("transformers", "—"), "; ".join(stand_ins(record)) or "—"]


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    rows = [row(r) for r in runs]
    standing_in = any(r[-1] != "—" for r in rows)
    table = Table("Each run: where and with what it ran", HEADERS, rows,
                  note="From each run's run.json (older runs: their .hydra/ config; their "
                  "machine and versions are unknown). Stand-ins: the models and data that "
                  "replaced the study's in this run." + (" " + NOTE) * standing_in)
    return SectionOutput(KEY, TITLE, intro=NOTE if standing_in else "", tables=[table])
