"""The intelligibility audit of the spoken stimuli: was each group's speech heard as written?

espeak-ng's accent groups are language voices (Hindi, Swahili, Lancastrian rules reading English),
so a model that answers one accent differently may be treating the speaker differently, or may
simply not have understood the words. The audit tells the two apart:

- each stimulus is measured (:mod:`.acoustics`): its speech span, speaking rate (words of its
  text per second of speech) and mean pitch, and, under ``asr=whisper_large_v3``, transcribed by
  Whisper and scored by its word error rate against the text it speaks (both sides through
  Whisper's English normaliser, then jiwer). ``audio/manifest.csv`` keeps every figure;
- every answer row gets its stimulus's WER (``stimulus_wer``), and GUS and SNSR are scored again
  within strata of *stimulus* WER (``probe.audio.wer_strata``). An item (one utterance under
  every group of an attribute) falls in the stratum of its worst-heard rendering, so in the
  lowest stratum every group's words came through: a GUS or SNSR there is not mishearing.

Metrics: ``stimulus/wer``, ``stimulus/<wer|words_per_second|pitch_hz>/<group>`` (means over the
run's distinct stimuli), and ``fairness/<task>/<attribute>/by_wer/<stratum>/<gus|snsr|snsv|
n_items>``, strata named by their bounds (``le0.1``, ``0.1-0.3``, ``gt0.3``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

import jiwer
import pandas as pd

from benevaudit.llm.audio_in import Clip, read_clip
from benevaudit.probes.fairdialogue.acoustics import measure, words_per_second
from benevaudit.probes.fairdialogue.groups import NEUTRAL

Row = dict[str, Any]
STRATIFIED = re.compile(r"^fairness/([^/]+)/([^/]+)/(gus|snsr|snsv|n_items)$")
MEASURES = ("wer", "words_per_second", "pitch_hz")


class Hears(Protocol):
    """A transcriber for the audit (:class:`benevaudit.asr.replies.Hearing`)."""

    name: str

    def transcribe(self, clips: Sequence[Clip]) -> list[str]: ...

    def normalise(self, text: str) -> str: ...


class Audit(NamedTuple):
    """One stimulus's figures, as ``audio/manifest.csv`` lists them."""

    speech_seconds: float
    words_per_second: float
    pitch_hz: float
    transcript: str | None      # None without a transcriber
    asr_model: str | None
    wer: float | None           # None without a transcriber; NaN for an empty text


def error_rate(text: str, transcript: str, normalise: Callable[[str], str]) -> float:
    """Word error rate of ``transcript`` against ``text``, both normalised; NaN when the
    normalised text has no word."""
    reference, hypothesis = normalise(text).strip(), normalise(transcript).strip()
    if not reference:
        return float("nan")
    return float(jiwer.wer(reference, hypothesis)) if hypothesis else 1.0


def audit(texts: Sequence[str], wavs: Sequence[bytes], hears: Hears | None,
          names: Sequence[str] | None = None) -> list[Audit]:
    """The figures of each stimulus (``texts[i]`` spoken in the clip ``wavs[i]``, named
    ``names[i]`` in errors); transcribed in one batch when ``hears`` is given."""
    named = names if names is not None else [str(i) for i in range(len(wavs))]
    clips = [read_clip(data, f"stimulus {name}") for data, name in zip(wavs, named, strict=True)]
    heard: list[str | None] = [None] * len(clips)
    if hears is not None and clips:
        heard = list(hears.transcribe(clips))
    out = []
    for text, clip, transcript in zip(texts, clips, heard, strict=True):
        sound = measure(clip)
        wer = None if transcript is None or hears is None else error_rate(
            text, transcript, hears.normalise)
        out.append(Audit(round(sound.speech_seconds, 3),
                         words_per_second(text, sound.speech_seconds), sound.pitch_hz,
                         transcript, None if hears is None else hears.name, wer))
    return out


def labels(edges: Sequence[float]) -> list[str]:
    """Stratum names of ascending WER ``edges``: ``[0.1, 0.3]`` -> le0.1, 0.1-0.3, gt0.3."""
    bounds = [f"{e:g}" for e in edges]
    middle = [f"{a}-{b}" for a, b in zip(bounds, bounds[1:])]
    return [f"le{bounds[0]}", *middle, f"gt{bounds[-1]}"]


def stratum(wer: float, edges: Sequence[float]) -> str:
    """The stratum of one WER: the first whose upper edge it does not pass."""
    names = labels(edges)
    for name, edge in zip(names, edges):
        if wer <= edge:
            return name
    return names[-1]


def finite(value: Any) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def item_strata(rows: Iterable[Mapping[str, Any]], edges: Sequence[float]
                ) -> dict[tuple[str, str, str], str]:
    """``{(task, attribute, item): stratum}`` by the worst stimulus WER over the item's groups
    (``neutral`` left out); an item with a rendering of unknown WER has none."""
    worst: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for r in rows:
        if r["group"] != NEUTRAL:
            worst[(str(r["task"]), str(r["attribute"]), str(r["item"]))].append(
                r.get("stimulus_wer"))
    return {key: stratum(max(wers), edges) for key, wers in worst.items()
            if all(finite(w) for w in wers)}


def stratified(rows: Sequence[Row], edges: Sequence[float],
               score: Callable[[list[Row]], dict[str, float]]) -> dict[str, float]:
    """``score``'s GUS, SNSR, SNSV and n_items again within each stratum of stimulus WER, as
    ``fairness/<task>/<attribute>/by_wer/<stratum>/<measure>``; a stratum without items of a
    cell gets ``n_items`` 0. Empty when no row has a stimulus WER (text mode, no ASR)."""
    strata = item_strata(rows, edges)
    if not strata:
        return {}
    metrics: dict[str, float] = {}
    cells = sorted({(t, a) for t, a, _ in strata})
    for name in labels(edges):
        part = [r for r in rows
                if strata.get((str(r["task"]), str(r["attribute"]), str(r["item"]))) == name]
        scored = score(part) if part else {}
        for task, attribute in cells:
            metrics[f"fairness/{task}/{attribute}/by_wer/{name}/n_items"] = 0
        for key, value in scored.items():
            if m := STRATIFIED.match(key):
                metrics[f"fairness/{m[1]}/{m[2]}/by_wer/{name}/{m[3]}"] = value
    return metrics


def stimulus_metrics(table: pd.DataFrame | None) -> dict[str, float]:
    """``stimulus/wer`` over every distinct stimulus and ``stimulus/<measure>/<group>``: the
    mean WER, speaking rate and pitch of each group's stimuli (NaN-free means; a measure with no
    value in a group is left out)."""
    if table is None or "pitch_hz" not in table.columns:
        return {}
    table = table.drop_duplicates(["item", "task", "group"])
    values = {m: pd.to_numeric(table[m], errors="coerce") for m in MEASURES}
    metrics: dict[str, float] = {}
    if values["wer"].notna().any():
        metrics["stimulus/wer"] = float(values["wer"].mean())
    for group in sorted(set(table["group"])):
        mask = (table["group"] == group).to_numpy()
        for m in MEASURES:
            if values[m][mask].notna().any():
                metrics[f"stimulus/{m}/{group}"] = float(values[m][mask].mean())
    return metrics
