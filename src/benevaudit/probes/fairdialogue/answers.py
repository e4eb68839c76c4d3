"""The answers a FairDialogue probe scores: asked of the target, or read from a CSV.

Scenarios × groups (``probe.attributes``) are rendered in text or audio mode and sent to the
target (``target.llm``, through the request cache), identical requests once; or a CSV of
answers made elsewhere (``probe.answers.path``) is read instead. ``scored_answers`` parses them
for the decision and recommendation probes; ``table_texts`` renders their ``table.csv`` and
``table.md``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from benevaudit.asr.replies import add_spoken
from benevaudit.errors import ConfigError
from benevaudit.files import read_csv
from benevaudit.llm import ChatModel, Conversation, Sampling, build_from_block, dry_run
from benevaudit.llm.batched import batched_chat
from benevaudit.probes.base import RunSettings, Target
from benevaudit.probes.fairdialogue import render, scoring
from benevaudit.probes.fairdialogue.audio import audio_message
from benevaudit.probes.fairdialogue.stimuli import make_stimuli, stimulus_paths, wav_bytes
from benevaudit.probes.fairdialogue.groups import NEUTRAL

log = logging.getLogger(__name__)
MODES = ("text", "audio")
CSV_COLUMNS = ("item", "task", "attribute", "group", "answer")
# reply tokens a ranked list needs per item on small models (a name of a few words, its number
# and newline); ``max_tokens: auto`` in a recommendation probe is K times this
TOKENS_PER_ITEM = 12


def ask(model: ChatModel, conversations: list[Conversation], sampling: Sampling,
        progress: bool, chunk: int = 16) -> list[Any]:
    """Replies in order; identical requests are sent once, in chunks so the cache fills as the
    run goes (an interrupted run resumes from the last finished chunk)."""
    keys = [json.dumps(c, sort_keys=True) for c in conversations]
    first: dict[str, Conversation] = {}
    for key, conv in zip(keys, conversations, strict=True):
        first.setdefault(key, conv)
    unique = list(first)
    replies = batched_chat(model, [first[k] for k in unique], sampling, chunk, progress,
                           desc="target")
    answers = dict(zip(unique, replies, strict=True))
    return [answers[k] for k in keys]


def read_answers(path: str) -> list[dict[str, Any]]:
    """Rows of a CSV made elsewhere: columns item, task, attribute, group, answer."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"probe.answers.path: no file at {path!r}; expected a CSV with the "
                          f"columns {list(CSV_COLUMNS)}")
    table = read_csv(file, "probe.answers.path", CSV_COLUMNS, f"a CSV with columns "
                     f"{list(CSV_COLUMNS)}", dtype=str, keep_default_na=False)
    for i, row in table.iterrows():
        empty = [c for c in CSV_COLUMNS[:4] if not str(row[c]).strip()]
        if empty:
            raise ConfigError(f"{file}, line {int(i) + 2}: empty {empty}; every answer needs "
                              "its item, task, attribute and group")
    return [{c: str(row[c]) for c in CSV_COLUMNS} for _, row in table.iterrows()]


def list_length(p: dict[str, Any]) -> int | None:
    """``probe.k``, the length of a ranked list: recommendations only."""
    return int(p["k"]) if p["kind"] == "recommendation" else None


def filled(text: str | None, k: int | None) -> str:
    """``probe.instruction`` or ``probe.suffix`` with K filled in where a list has one."""
    return str(text or "").replace("{k}", "" if k is None else str(k))


def render_cells(p: dict[str, Any], cells: list[render.Cell], run_dir: Path,
                 target: dict[str, Any]) -> list[Conversation]:
    """One conversation per cell, in text or audio mode."""
    mode = p["mode"]
    if mode not in MODES:
        raise ConfigError(f"probe.mode must be one of {list(MODES)}, got {mode!r}")
    k = list_length(p)
    instruction, suffix = filled(p["instruction"], k), filled(p["suffix"], k)
    if mode == "text":
        return [render.text_conversation(c.utterance, c.group, p["text_style"], instruction,
                                         suffix) for c in cells]
    if not target["llm"].get("audio_in"):
        raise ConfigError(f"probe.mode=audio needs a target that hears audio "
                          f"(target.llm.audio_in=true); target {target['name']!r} does not")
    system: list[Any] = [{"role": "system", "content": instruction}] if instruction else []
    return [[*system, audio_message(wav_bytes(s.path), suffix or None)]
            for s in make_stimuli(cells, p["audio"], run_dir)]


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


def sampling_of(p: dict[str, Any], seed: int) -> Sampling:
    s = dict(p["sampling"])
    if s["max_tokens"] == "auto":         # a ranked list's: K items
        s["max_tokens"] = TOKENS_PER_ITEM * int(p["k"])
    return Sampling(**{**s, "seed": int(s.get("seed", seed)), "stop": tuple(s.get("stop") or ())})


def collect(p: dict[str, Any], kind: str, attributes: dict[str, list[str]], target: Target,
            settings: RunSettings
            ) -> tuple[list[dict[str, Any]], list[Conversation], ChatModel | None]:
    """Answer rows (from the target or a CSV), their conversations, and the model if one ran."""
    answers_path = p["answers"]["path"]
    if answers_path:
        log.info("scoring answers from %s; no target model is loaded", answers_path)
        return read_answers(answers_path), [], None
    limit = settings.limit
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of scenarios per task or null, "
                          f"got {limit}")
    items = render.scenarios(kind, list(p["tasks"]), limit, list_length(p))
    cells = render.cells(items, attributes, bool(p["neutral"]))
    conversations = render_cells(p, cells, settings.run_dir, target)
    model = build_from_block(target["llm"], cache=settings.llm_cache)
    log.info("%d requests (%d scenarios × groups) to target %s", len(cells), len(items),
             target["name"])
    dry_run.expect([{"id": f"{c.task}/{c.item}/{c.attribute}/{c.group}", "method": kind,
                     "task": c.task, "attribute": c.attribute, "group": c.group, "item": c.item}
                    for c in cells], conversations)   # request identity, in a dry run only
    replies = ask(model, conversations, sampling_of(p, settings.seed), settings.progress)
    wavs = stimulus_paths(settings.run_dir) if p["mode"] == "audio" else {}
    rows = [{"item": c.item, "task": c.task, "attribute": c.attribute, "group": c.group,
             "messages": stored_messages(conv, c, wavs.get((c.item, c.task, c.group))),
             "answer": r.text,
             "finish_reason": r.finish_reason, "cached": r.cached}
            for c, conv, r in zip(cells, conversations, replies, strict=True)]
    add_spoken(rows, replies, settings.run_dir, settings.asr)   # the answer is what was heard
    return rows, conversations, model


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


def scored_answers(p: dict[str, Any], kind: str, attributes: dict[str, list[str]],
                   target: Target, settings: RunSettings) -> Answers:
    """The target's answers (or the CSV's, with its own attributes and groups in order of
    appearance), parsed as decisions or ranked lists."""
    name = str(target["name"])
    rows, _, model = collect(p, kind, attributes, target, settings)
    if model is not None:
        model.close()
    else:  # scored from a CSV: its own attributes and groups, in order of appearance
        name = f"answers from {Path(p['answers']['path']).name}"
        attributes = discovered_groups(rows)
    return Answers(scoring.parse_rows(rows, kind, list_length(p)), attributes, name)


def table_texts(rows: list[dict[str, Any]]) -> dict[str, str]:
    """``table.csv`` and ``table.md`` of the table rows."""
    table = pd.DataFrame(rows)
    return {"table.csv": table.to_csv(index=False),
            "table.md": (table.to_markdown(index=False, floatfmt=".3f") + "\n"
                         if len(table) else "(no scored cells)\n")}
