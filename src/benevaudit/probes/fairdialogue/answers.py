"""The answers a FairDialogue probe scores: asked of the target, or read from a CSV.

Scenarios × groups (``probe.attributes``) are rendered in text or audio mode and sent to the
target (``target.llm``, through the request cache), identical requests once; or a CSV of
answers made elsewhere (``probe.answers.path``), or an Inspect run's log of
``benevaudit/fairdialogue`` (``probe.answers.inspect_log``, ``logged``), is read instead.
``scored_answers`` parses them for the decision and recommendation probes; ``table_texts``
renders their ``table.csv`` and ``table.md``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Literal, NamedTuple, Union

import pandas as pd

from benevaudit.asr.replies import Hearing, add_spoken, hearing_of
from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_csv
from benevaudit.llm import ChatModel, Conversation, Sampling, dry_run
from benevaudit.llm.batched import batched_chat
from benevaudit.probes.base import RunSettings, Target
from benevaudit.probes.fairdialogue import render, scoring
from benevaudit.probes.fairdialogue.audio import audio_conversation
from benevaudit.probes.fairdialogue.stimuli import (Earlier, Stimuli, earlier_stimuli,
                                                    make_stimuli, wav_bytes)
from benevaudit.probes.fairdialogue.groups import NEUTRAL, check_attributes
from benevaudit.probes.fairdialogue.logged import log_rows
from benevaudit.probes.models import Models
from benevaudit.probes.spec import DecisionSpec, FeedbackSpec, RecommendationSpec

log = logging.getLogger(__name__)
FairDialogue = Union[DecisionSpec, RecommendationSpec, FeedbackSpec]   # a probe's spec
Asked = Literal["decision", "recommendation"]     # what the scenarios ask for
CSV_COLUMNS = ("item", "task", "attribute", "group", "answer")
# reply tokens a ranked list needs per item on small models (a name of a few words, its number
# and newline); ``max_tokens: auto`` in a recommendation probe is K times this
TOKENS_PER_ITEM = 12


def ask(model: ChatModel, conversations: list[Conversation], sampling: Sampling,
        progress: bool, chunk: int = 16) -> list[Any]:
    """Replies in order; identical requests are sent once (``batched_chat``), in chunks so the
    cache fills as the run goes (an interrupted run resumes from the last finished chunk)."""
    return batched_chat(model, conversations, sampling, chunk, progress, desc="target")


def read_answers(path: str, repeats: str = "error") -> list[dict[str, Any]]:
    """Rows of a CSV made elsewhere: columns item, task, attribute, group, answer; at least one
    row, and one row per cell unless ``repeats`` is ``release`` (``probe.answers.repeats``)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"probe.answers.path: no file at {path!r}; expected a CSV with the "
                          f"columns {list(CSV_COLUMNS)}")
    table = read_csv(file, "probe.answers.path", CSV_COLUMNS, f"a CSV with columns "
                     f"{list(CSV_COLUMNS)}", dtype=str, keep_default_na=False)
    first: dict[tuple[str, ...], int] = {}   # a cell -> the line that answers it
    for i, row in table.iterrows():
        line = int(i) + 2
        empty = [c for c in CSV_COLUMNS[:4] if not str(row[c]).strip()]
        if empty:
            raise ConfigError(f"{file}, line {line}: empty {empty}; every answer needs "
                              "its item, task, attribute and group")
        cell = tuple(str(row[c]) for c in CSV_COLUMNS[:4])
        if cell in first and repeats == "error":   # else counted twice, or one dropped
            raise InputError(f"{file}: lines {first[cell]} and {line} answer the same cell "
                             "(item, task, attribute, group); keep one answer per cell, or set "
                             "probe.answers.repeats=release to keep them as the release does")
        first.setdefault(cell, line)
    if len(first) < len(table):
        log.info("%s: %d repeated answers kept as the release keeps them (released/* metrics "
                 "average or concatenate them; the others read the first)", file,
                 len(table) - len(first))
    return [{c: str(row[c]) for c in CSV_COLUMNS} for _, row in table.iterrows()]


def list_length(spec: FairDialogue) -> int | None:
    """``probe.k``, the length of a ranked list: recommendations only."""
    return spec.k if isinstance(spec, RecommendationSpec) else None


def filled(text: str | None, k: int | None) -> str:
    """``probe.instruction`` or ``probe.suffix`` with K filled in where a list has one."""
    return str(text or "").replace("{k}", "" if k is None else str(k))


class Rendered(NamedTuple):
    """One conversation per cell, and audio mode's spoken stimuli (empty in text mode)."""

    conversations: list[Conversation]
    stimuli: Stimuli


def render_cells(spec: FairDialogue, cells: list[render.Cell], target: Target,
                 earlier: Earlier = Earlier(), hears: Hearing | None = None) -> Rendered:
    """One conversation per cell, in text or audio mode (each stimulus transcribed by
    ``hears`` for the intelligibility audit; ``earlier``: what a run before left, reused)."""
    k = list_length(spec)
    instruction, suffix = filled(spec.instruction, k), filled(spec.suffix, k)
    if spec.mode == "text":
        return Rendered([render.text_conversation(c.utterance, c.group, spec.text_style,
                                                  instruction, suffix) for c in cells], Stimuli())
    if not target.llm.audio_in:
        raise ConfigError(f"probe.mode=audio needs a target that hears audio "
                          f"(target.llm.audio_in=true); target {target.name!r} does not")
    stimuli = make_stimuli(cells, spec.audio, earlier, hears)
    return Rendered([audio_conversation(wav_bytes(s.data), instruction, suffix)
                     for s in stimuli.clips], stimuli)


def stored_messages(conv: Conversation, cell: render.Cell, wav: str | None = None) -> str:
    """Messages as JSON for responses.parquet; audio parts name their WAV (``wav``, else the
    run's ``audio/<task>/<item>__<group>.wav``) instead of its bytes."""
    def part(x: Any) -> Any:
        if isinstance(x, dict) and x.get("type") == "input_audio":
            return {"type": "input_audio",
                    "wav": wav or f"audio/{cell.task}/{cell.item}__{cell.group}.wav"}
        return x

    return json.dumps([{**m, "content": m["content"] if isinstance(m["content"], str)
                        else [part(x) for x in m["content"]]} for m in conv], ensure_ascii=False)


def sampling_of(spec: FairDialogue, seed: int) -> Sampling:
    """``probe.sampling``; ``max_tokens: auto`` is a ranked list's budget (K items), and the
    run's ``seed`` stands in for an absent ``probe.sampling.seed``."""
    s, k = spec.sampling, list_length(spec)
    if s.max_tokens != "auto":
        max_tokens = s.max_tokens
    elif k is not None:
        max_tokens = TOKENS_PER_ITEM * k
    else:
        raise ConfigError("probe.sampling.max_tokens=auto sizes a ranked list's reply; "
                          f"probe.kind={spec.kind} asks for none, so give a number")
    return Sampling(temperature=s.temperature, top_p=s.top_p, max_tokens=max_tokens,
                    seed=seed if s.seed is None else s.seed)


def run_hearing(settings: RunSettings) -> Hearing | None:
    """The run's Whisper (``asr=whisper``), shared by the stimuli and the replies; none in a
    dry run, which loads no model."""
    return None if dry_run.active() is not None else hearing_of(settings.asr)


class Collection(NamedTuple):
    """Answer rows, their conversations, the models if one ran (the caller closes them), and
    audio mode's spoken stimuli with the target's spoken replies."""

    rows: list[dict[str, Any]]
    conversations: list[Conversation]
    models: Models | None
    stimuli: Stimuli = Stimuli()


def collect(spec: FairDialogue, kind: Asked, attributes: dict[str, list[str]], target: Target,
            settings: RunSettings, hears: Hearing | None = None) -> Collection:
    """Answer rows (from the target or a CSV), their conversations, the models if one ran and
    the stimuli. ``hears`` transcribes the stimuli and the spoken replies."""
    answers_path = spec.answers.path
    if spec.answers.inspect_log:
        log.info("scoring the answers of the Inspect log %s; no target model is loaded",
                 spec.answers.inspect_log)
        return Collection(log_rows(spec.answers.inspect_log, kind), [], None)
    if answers_path:
        log.info("scoring answers from %s; no target model is loaded", answers_path)
        return Collection(read_answers(answers_path, spec.answers.repeats), [], None)
    limit = settings.limit
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of scenarios per task or null, "
                          f"got {limit}")
    items = render.scenarios(kind, list(spec.tasks), limit, list_length(spec))
    cells = render.cells(items, attributes, spec.neutral)
    conversations, stimuli = render_cells(spec, cells, target,
                                          earlier_stimuli(settings.run_dir), hears)
    models = Models(settings.llm_cache)
    model = models.get(target.llm)
    log.info("%d requests (%d scenarios × groups) to target %s", len(cells), len(items),
             target.name)
    dry_run.expect([{"id": f"{c.task}/{c.item}/{c.attribute}/{c.group}", "method": kind,
                     "task": c.task, "attribute": c.attribute, "group": c.group, "item": c.item}
                    for c in cells], conversations)   # request identity, in a dry run only
    replies = ask(model, conversations, sampling_of(spec, settings.seed), settings.progress)
    wavs = stimuli.paths()
    rows = [{"item": c.item, "task": c.task, "attribute": c.attribute, "group": c.group,
             "messages": stored_messages(conv, c, wavs.get((c.item, c.task, c.group))),
             "answer": r.text,
             "finish_reason": r.finish_reason, "cached": r.cached}
            for c, conv, r in zip(cells, conversations, replies, strict=True)]
    if spec.mode == "audio":      # the stimulus's WER (intelligibility audit), None unheard
        wers = stimuli.wers()
        for row in rows:
            row["stimulus_wer"] = wers.get((row["item"], row["task"], row["group"]))
    said = add_spoken(rows, replies, settings.asr,   # the answer is what was heard
                      hears.transcribe if hears is not None else None)
    return Collection(rows, conversations, models, stimuli + Stimuli(replies=tuple(said)))


def discovered_groups(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """``{attribute: [groups]}`` in order of first appearance, ``neutral`` left out."""
    out: dict[str, list[str]] = {}
    for r in rows:
        groups = out.setdefault(r["attribute"], [])
        if r["group"] != NEUTRAL and r["group"] not in groups:
            groups.append(r["group"])
    return out


class Answers(NamedTuple):
    """Parsed answer rows, the attributes they cover, and who gave them (for titles)."""

    rows: list[dict[str, Any]]
    attributes: dict[str, list[str]]
    target: str
    stimuli: Stimuli = Stimuli()      # audio mode's, written by the pipeline


def scored_answers(spec: DecisionSpec | RecommendationSpec, attributes: dict[str, list[str]],
                   target: Target, settings: RunSettings) -> Answers:
    """The target's answers (or the CSV's, with its own attributes and groups in order of
    appearance), parsed as decisions or ranked lists."""
    name = target.name
    rows, _, models, stimuli = collect(spec, spec.kind, attributes, target, settings,
                                       run_hearing(settings))
    if models is not None:
        models.close()
    else:  # scored from a CSV: its own attributes and groups, in order of appearance
        name = f"answers from {Path(str(spec.answers.path or spec.answers.inspect_log)).name}"
        attributes = discovered_groups(rows)
    return Answers(scoring.parse_rows(rows, spec.kind, list_length(spec)), attributes, name,
                   stimuli)


PARSED = ("decision", "ranked", "parse_status")     # what parsing adds to an answer row


def saved_answers(spec: DecisionSpec | RecommendationSpec, rows: list[dict[str, Any]],
                  target: str) -> Answers:
    """A text-mode run's saved answer rows (its ``responses.parquet``) parsed again with this
    block's settings; its attributes as the run had them. An audio-mode run's metrics read its
    stimuli, which a rescore does not make again: refused."""
    if spec.mode == "audio":
        raise ConfigError("rescore= re-scores text-mode FairDialogue runs; an audio-mode run's "
                          "metrics read its spoken stimuli (audio/), which a rescore does not "
                          "make again: rerun it, with the request cache, to score it anew")
    answered = [{k: v for k, v in row.items() if k not in PARSED} for row in rows]
    elsewhere = spec.answers.path or spec.answers.inspect_log
    attributes = (discovered_groups(answered) if elsewhere
                  else check_attributes(spec.attributes))
    name = f"answers from {Path(str(elsewhere)).name}" if elsewhere else target
    log.info("re-scoring %d saved answers; no target model is loaded", len(answered))
    return Answers(scoring.parse_rows(answered, spec.kind, list_length(spec)), attributes, name)


def table_texts(rows: list[dict[str, Any]]) -> dict[str, str]:
    """``table.csv`` and ``table.md`` of the table rows."""
    table = pd.DataFrame(rows)
    return {"table.csv": table.to_csv(index=False),
            "table.md": (table.to_markdown(index=False, floatfmt=".3f") + "\n"
                         if len(table) else "(no scored cells)\n")}
