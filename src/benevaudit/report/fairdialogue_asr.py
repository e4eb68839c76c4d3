"""FairDialogue's spoken replies in the report: how well Whisper heard them.

A target that answers in speech is scored on Whisper's transcript (``asr=whisper_large_v3``);
where the API also returned its own transcript (GPT-4o Audio), the run writes Whisper's word
error rate against it (``asr/wer``) and per speaker group (``asr/wer/<attribute>/<group>``).
A transcriber that hears one group's replies worse would move that group's parsed answers, so
the table sits beside Tables 2 and 3, one row per model, probe and group, each with a bootstrap
interval over the run's items (an item's replies under every group drawn together), rebuilt
from ``responses.parquet`` through the same per-reply counts as the run's own value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.metrics.wer import wer_resamples
from benevaudit.report.context import Context, by_condition
from benevaudit.report.document import Table
from benevaudit.report.probe_intervals import matching
from benevaudit.report.runs import Run

WER = re.compile(r"^asr/wer(?:/(?P<attribute>[^/]+)/(?P<group>[^/]+))?$")
ALL = "all"


def wer_replicates(frame: pd.DataFrame, n_resamples: int, seed: int
                   ) -> dict[str, tuple[float, np.ndarray]]:
    """``asr/wer`` and ``asr/wer/<attribute>/<group>`` of a run's ``responses.parquet`` as
    (full-sample value, [R] resamples over items)."""
    if not {"api_transcript", "transcript"} <= set(frame.columns):
        return {}
    return wer_resamples(frame.to_dict("records"), n_resamples, seed)


def run_replicates(run: Run, context: Context) -> dict[str, np.ndarray]:
    """The run's WER resamples, where its rows reproduce its own values."""
    def make(frame: Any, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
        return matching(wer_replicates(frame, n_resamples, seed), run.metrics)
    return context.replicates(run, "responses.parquet", "fairdialogue_asr", make)


def wer_names(members: Sequence[Run]) -> list[str]:
    """The runs' WER metrics: the overall value first, then by attribute and group."""
    names = {n for r in members for n in r.metrics if WER.match(n)}
    return sorted(names, key=lambda n: (n != "asr/wer", n))


def wer_table(runs: Sequence[Run], context: Context, label: Callable[[Run], str]
              ) -> Table | None:
    """One row per (model, probe, attribute, group) with a WER; None when no run has one."""
    rows: list[list[Any]] = []
    grouped = by_condition(runs, lambda r: (label(r), r.condition))
    for (model, _), members in grouped.items():
        names = wer_names(members)
        if not names:
            continue
        reps = [run_replicates(r, context) for r in members]
        probe = members[0].choices.get("probe") or "?"
        for name in names:
            m = WER.match(name)
            attribute, group = (m["attribute"], m["group"]) if m and m["attribute"] else (ALL, ALL)
            pairs = name.replace("asr/wer", "asr/wer_pairs", 1)
            counts = ", ".join(str(int(r.metrics[pairs])) for r in members if pairs in r.metrics)
            rows.append([model, probe, attribute, group, context.cell(members, name, reps),
                         counts])
    if not rows:
        return None
    return Table("Spoken replies: Whisper's word error rate against the API's own transcripts",
                 ["Model", "Probe", "Attribute", "Group", "WER", "Replies"], rows,
                 note="Replies: those that came with both transcripts, per seed (the API's "
                 "transcript is the reference; lower case, punctuation removed). Mean ± std "
                 "over seeds (n), [95% bootstrap interval over items]. The answers parsed are "
                 "Whisper's transcripts.")
