"""FairDialogue's intelligibility audit in the report: was a group treated differently, or
misheard?

Two tables, beyond the paper. *Spoken stimuli* gives, per speaker group, the mean Whisper word
error rate of its stimuli against their text, their speaking rate (words per second of speech)
and mean pitch (``stimulus/<measure>/<group>``), over the audio runs that wrote them: an accent
whose stimuli Whisper mishears is one a speech model may mishear too. *By stimulus WER* sets
each model's GUS (decisions) and SNSR, SNSV (recommendations) over all items beside the same
measure within each stratum of stimulus WER (``fairness/<task>/<attribute>/by_wer/<stratum>/…``,
an item in the stratum of its worst-heard group): a gap that stays in the lowest stratum, where
every group's words came through, is not mishearing. Intervals are bootstrap intervals over the
stratum's items, rebuilt from ``responses.parquet`` (``stimulus_wer``) where they reproduce
the run's own value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from benevaudit.probes.fairdialogue.intelligibility import item_strata, labels
from benevaudit.report.context import Context, by_condition
from benevaudit.report.document import Cell, Table
from benevaudit.report.probe_intervals import gus_replicates, matching, prag_replicates
from benevaudit.report.runs import Run

STRATUM = re.compile(r"^fairness/(?P<task>[^/]+)/(?P<attribute>[^/]+)/by_wer/(?P<stratum>[^/]+)/"
                     r"(?P<measure>gus|snsr|snsv)$")
COUNTED = re.compile(r"^fairness/[^/]+/[^/]+/by_wer/(?P<stratum>[^/]+)/n_items$")
STIMULUS = re.compile(r"^stimulus/(?P<measure>wer|words_per_second|pitch_hz)/(?P<group>[^/]+)$")
MEASURES = {"wer": "WER", "words_per_second": "Words/s", "pitch_hz": "Pitch (Hz)"}


def stratum_order(name: str) -> tuple[float, str]:
    """``le0.1`` < ``0.1-0.3`` < ``gt0.3``: by the stratum's lower bound."""
    if name.startswith("le"):
        return (-1.0, name)
    bound = name.removeprefix("gt").split("-")[0]
    try:
        return (float(bound) + (0.5 if name.startswith("gt") else 0.0), name)
    except ValueError:
        return (float("inf"), name)


def strata_replicates(run: Run, context: Context) -> dict[str, Any]:
    """The run's stratified GUS/SNSR/SNSV resamples: each stratum's items' rows scored as the
    run scored them, kept where they reproduce its values."""
    edges = list(run.settings.wer_strata)
    k, normalise = run.settings.k, run.settings.prag_normalise

    def make(frame: pd.DataFrame, n: int, seed: int) -> dict[str, Any]:
        if not edges or "stimulus_wer" not in frame.columns:
            return {}
        rows = frame[["task", "attribute", "item", "group", "stimulus_wer"]].to_dict("records")
        strata = item_strata(rows, list(edges))
        keys = list(zip(frame["task"], frame["attribute"], frame["item"], strict=True))
        out: dict[str, Any] = {}
        for name in labels(list(edges)):
            part = frame[[strata.get((str(t), str(a), str(i))) == name for t, a, i in keys]]
            if part.empty:
                continue
            both = gus_replicates(part, n, seed)
            if k:
                both.update(prag_replicates(part, k, normalise, n, seed))
            for metric, value in both.items():
                task, attribute, measure = metric.split("/")[1:]
                out[f"fairness/{task}/{attribute}/by_wer/{name}/{measure}"] = value
        return matching(out, run.metrics)
    return context.replicates(run, "responses.parquet", "fairdialogue_strata", make)


def strata_table(runs: Sequence[Run], context: Context, label: Callable[[Run], str]
                 ) -> Table | None:
    """One row per (model, task, attribute, measure): the measure over all items, then per
    stratum of stimulus WER with its item count; None when no run wrote a stratum."""
    found = {m.groups() for r in runs for n in r.metrics if (m := STRATUM.match(n))}
    if not found:
        return None
    strata = sorted({m["stratum"] for r in runs for n in r.metrics if (m := COUNTED.match(n))}
                    | {s for _, _, s, _ in found}, key=stratum_order)   # empty ones too
    rows: list[list[Any]] = []
    for (model, _), members in by_condition(runs, lambda r: (label(r), r.condition)).items():
        reps = [strata_replicates(r, context) for r in members]
        cells = sorted({(t, a, m) for t, a, _, m in found
                        if any(f"fairness/{t}/{a}/by_wer/{s}/{m}" in r.metrics
                               for s in strata for r in members)},
                       key=lambda c: (c[2] != "gus", c[0], c[1], c[2]))
        for task, attribute, measure in cells:
            row: list[Any] = [model, task, attribute, measure.upper(),
                              context.cell(members, f"fairness/{task}/{attribute}/{measure}")]
            for s in strata:
                base = f"fairness/{task}/{attribute}/by_wer/{s}"
                have = [i for i, r in enumerate(members) if f"{base}/{measure}" in r.metrics]
                row.append(context.cell([members[i] for i in have], f"{base}/{measure}",
                                        [reps[i] for i in have]) if have else Cell(float("nan")))
                row.append(context.cell(members, f"{base}/n_items"))
            rows.append(row)
    headers = ["Model", "Task", "Attribute", "Measure", "All items"]
    for s in strata:
        headers += [f"WER {s}", f"n {s}"]
    return Table("By stimulus WER: GUS, SNSR and SNSV within strata of the stimuli's Whisper "
                 "word error rate", headers, rows,
                 note="An item (one utterance under every group) is in the stratum of its "
                 "worst-heard group's stimulus (probe.audio.wer_strata). A difference in the "
                 "lowest stratum, where every group was transcribed well, is not mishearing. "
                 "Mean ± std over seeds (n), [95% bootstrap interval over the stratum's items]; "
                 "n: items scored.")


def stimuli_table(runs: Sequence[Run], context: Context) -> Table | None:
    """One row per speaker group: its stimuli's WER, speaking rate and pitch over the audio
    runs that measured them; None when no run did."""
    groups: dict[str, None] = {}
    for run in runs:
        for name in run.metrics:
            if m := STIMULUS.match(name):
                groups[m["group"]] = None
    if not groups:
        return None
    rows = []
    for group in groups:
        cells = []
        for measure in MEASURES:
            name = f"stimulus/{measure}/{group}"
            have = [r for r in runs if name in r.metrics]
            cells.append(context.cell(have, name) if have else Cell(float("nan")))
        rows.append([group, *cells])
    return Table("Spoken stimuli: Whisper's word error rate against the text, speaking rate and "
                 "pitch, per speaker group", ["Group", *MEASURES.values()], rows,
                 note="Means over each run's distinct stimuli, then mean ± std over the audio "
                 "runs (n). WER: Whisper's transcript of the stimulus against the text it speaks "
                 "(Whisper's English normaliser); words per second of speech (leading and "
                 "trailing silence left out); mean F0 over voiced frames. espeak-ng's accents "
                 "are language voices, so a high WER marks a group a model may mishear.")
