"""``python probe.py probe=fairdialogue_<decision|recommendation|feedback>``.

Flow: scenarios × groups (``probe.attributes``) → rendered in text or audio mode → the target
(``target.llm``, through the request cache) or a CSV of answers made elsewhere
(``probe.answers.path``) → parsed → GUS / PRAG*, SNSR, SNSV / RST, ANR → the run directory:
``responses.parquet``, ``metrics.json``, ``table.csv`` + ``table.md``, and a PNG figure.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Conversation, Sampling, build_from_block, dry_run
from benevaudit.pipelines.config import output_dir, plain, write_metrics
from benevaudit.probes.fairdialogue import render, scoring
from benevaudit.probes.fairdialogue.groups import check_attributes

log = logging.getLogger(__name__)
KINDS = ("decision", "recommendation", "feedback")
MODES = ("text", "audio")
CSV_COLUMNS = ("item", "task", "attribute", "group", "answer")
AUDIO_BACKENDS = ("openai", "vllm")


def ask(model: ChatModel, conversations: list[Conversation], sampling: Sampling,
        progress: bool, chunk: int = 16) -> list[Any]:
    """Replies in order; identical requests are sent once, in chunks so the cache fills as the
    run goes (an interrupted run resumes from the last finished chunk)."""
    from tqdm.auto import tqdm

    keys = [json.dumps(c, sort_keys=True) for c in conversations]
    first: dict[str, Conversation] = {}
    for key, conv in zip(keys, conversations, strict=True):
        first.setdefault(key, conv)
    unique = list(first)
    answers: dict[str, Any] = {}
    for start in tqdm(range(0, len(unique), chunk), disable=not progress, desc="target",
                      unit=f"×{chunk}"):
        batch = unique[start:start + chunk]
        answers.update(zip(batch, model.chat([first[k] for k in batch], sampling), strict=True))
    return [answers[k] for k in keys]


def read_answers(path: str) -> list[dict[str, Any]]:
    """Rows of a CSV made elsewhere: columns item, task, attribute, group, answer."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"probe.answers.path: no file at {path!r}; expected a CSV with the "
                          f"columns {list(CSV_COLUMNS)}")
    table = pd.read_csv(file, dtype=str, keep_default_na=False)
    missing = [c for c in CSV_COLUMNS if c not in table.columns]
    if missing:
        raise ConfigError(f"{file}: missing columns {missing}; expected {list(CSV_COLUMNS)}, "
                          f"found {list(table.columns)}")
    for i, row in table.iterrows():
        empty = [c for c in CSV_COLUMNS[:4] if not str(row[c]).strip()]
        if empty:
            raise ConfigError(f"{file}, line {int(i) + 2}: empty {empty}; every answer needs "
                              "its item, task, attribute and group")
    return [{c: str(row[c]) for c in CSV_COLUMNS} for _, row in table.iterrows()]


def render_cells(p: dict[str, Any], cells: list[render.Cell], run_dir: Path,
                 target: dict[str, Any]) -> list[Conversation]:
    """One conversation per cell, in text or audio mode."""
    mode = p.get("mode", "text")
    if mode not in MODES:
        raise ConfigError(f"probe.mode must be one of {list(MODES)}, got {mode!r}")
    instruction = str(p.get("instruction") or "").replace("{k}", str(p.get("k", "")))
    suffix = str(p.get("suffix") or "").replace("{k}", str(p.get("k", "")))
    if mode == "text":
        return [render.text_conversation(c.utterance, c.group, p.get("text_style", "system"),
                                         instruction, suffix) for c in cells]
    if target["llm"].get("backend") not in AUDIO_BACKENDS:
        raise ConfigError(f"probe.mode=audio needs an audio-capable target on one of "
                          f"{list(AUDIO_BACKENDS)}; target {target.get('name')!r} uses backend "
                          f"{target['llm'].get('backend')!r}")
    from benevaudit.probes.fairdialogue.audio import audio_conversation

    voices = (p.get("audio") or {}).get("voices") or {}
    return [audio_conversation(c.utterance, c.group, instruction,
                               run_dir / "audio" / c.task / f"{c.item}__{c.group}.wav", voices,
                               suffix)
            for c in cells]


def stored_messages(conv: Conversation, cell: render.Cell) -> str:
    """Messages as JSON for responses.parquet; audio parts name their WAV instead of its bytes."""
    def part(x: Any) -> Any:
        if isinstance(x, dict) and x.get("type") == "input_audio":
            return {"type": "input_audio",
                    "wav": f"audio/{cell.task}/{cell.item}__{cell.group}.wav"}
        return x

    return json.dumps([{**m, "content": m["content"] if isinstance(m["content"], str)
                        else [part(x) for x in m["content"]]} for m in conv], ensure_ascii=False)


# reply tokens a ranked list needs per item on small models (a name of a few words, its number
# and newline); ``max_tokens: auto`` in a recommendation probe is K times this
TOKENS_PER_ITEM = 12


def sampling_of(p: dict[str, Any], seed: int) -> Sampling:
    s = dict(p.get("sampling") or {})
    if s.get("max_tokens") == "auto":
        s["max_tokens"] = TOKENS_PER_ITEM * int(p.get("k", 10))
    return Sampling(**{**s, "seed": int(s.get("seed", seed)), "stop": tuple(s.get("stop") or ())})


def collect(cfg: DictConfig, p: dict[str, Any], kind: str, attributes: dict[str, list[str]],
            run_dir: Path) -> tuple[list[dict[str, Any]], list[Conversation], ChatModel | None]:
    """Answer rows (from the target or a CSV), their conversations, and the model if one ran."""
    answers_path = (p.get("answers") or {}).get("path")
    if answers_path:
        log.info("scoring answers from %s; no target model is loaded", answers_path)
        return read_answers(answers_path), [], None
    limit = None if cfg.get("limit") is None else int(cfg.limit)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of scenarios per task or null, "
                          f"got {limit}")
    items = render.scenarios(kind, list(p["tasks"]), limit, int(p.get("k", 10)))
    cells = render.cells(items, attributes, bool(p.get("neutral", False)))
    target = plain(cfg.target)
    conversations = render_cells(p, cells, run_dir, target)
    model = build_from_block(target["llm"], cache=cfg.get("llm_cache"))
    log.info("%d requests (%d scenarios × groups) to target %s", len(cells), len(items),
             target.get("name"))
    dry_run.expect([{"id": f"{c.task}/{c.item}/{c.attribute}/{c.group}", "method": kind,
                     "task": c.task, "attribute": c.attribute, "group": c.group, "item": c.item}
                    for c in cells], conversations)   # request identity, in a dry run only
    replies = ask(model, conversations, sampling_of(p, int(cfg.seed)), bool(cfg.progress))
    rows = [{"item": c.item, "task": c.task, "attribute": c.attribute, "group": c.group,
             "messages": stored_messages(conv, c), "answer": r.text,
             "finish_reason": r.finish_reason, "cached": r.cached}
            for c, conv, r in zip(cells, conversations, replies, strict=True)]
    return rows, conversations, model


def discovered_groups(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """``{attribute: [groups]}`` in order of first appearance, ``neutral`` left out."""
    from benevaudit.probes.fairdialogue.groups import NEUTRAL

    out: dict[str, list[str]] = {}
    for r in rows:
        groups = out.setdefault(r["attribute"], [])
        if r["group"] != NEUTRAL and r["group"] not in groups:
            groups.append(r["group"])
    return out


def write_tables(rows: list[dict[str, Any]], run_dir: Path) -> None:
    table = pd.DataFrame(rows)
    table.to_csv(run_dir / "table.csv", index=False)
    (run_dir / "table.md").write_text(table.to_markdown(index=False, floatfmt=".3f") + "\n"
                                      if len(table) else "(no scored cells)\n")


def fairllm_options(p: dict[str, Any]) -> tuple[str, str]:
    """``probe.fairllm.serp`` and ``probe.fairllm.prag``, checked (LangFair's by default)."""
    from benevaudit.metrics.fairness import PRAG_VARIANTS, SERP_VARIANTS

    options = p.get("fairllm") or {}
    chosen = (str(options.get("serp", "langfair")), str(options.get("prag", "langfair")))
    for key, value, valid in (("serp", chosen[0], SERP_VARIANTS),
                              ("prag", chosen[1], PRAG_VARIANTS)):
        if value not in valid:
            raise ConfigError(f"probe.fairllm.{key} must be one of {list(valid)}, got {value!r}")
    return chosen


def run(cfg: DictConfig) -> dict[str, float]:
    run_dir = output_dir(cfg)
    p = plain(cfg.probe)
    kind = p.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"probe.kind must be one of {list(KINDS)}, got {kind!r}")
    attributes = check_attributes(p.get("attributes") or {})
    target_name = str(cfg.target.get("name", "target"))
    if kind == "feedback":
        from benevaudit.pipelines.probe_fairdialogue_feedback import run_feedback_probe

        return run_feedback_probe(cfg, p, attributes, run_dir, target_name)
    k = int(p.get("k", 10))
    rows, _, model = collect(cfg, p, kind, attributes, run_dir)
    if model is not None:
        model.close()
    else:  # scored from a CSV: its own attributes and groups, in order of appearance
        target_name = f"answers from {Path(p['answers']['path']).name}"
        attributes = discovered_groups(rows)
    rows = scoring.parse_rows(rows, kind, k)
    if kind == "decision":
        metrics = scoring.decision_metrics(rows, attributes)
    else:
        normalise = (p.get("prag") or {}).get("normalise", "printed")
        serp_variant, prag_variant = fairllm_options(p)
        metrics = scoring.recommendation_metrics(rows, k, normalise, attributes, serp_variant,
                                                 prag_variant)
    pd.DataFrame(rows).to_parquet(run_dir / "responses.parquet", index=False)
    write_metrics(metrics, run_dir / "metrics.json")
    write_tables(scoring.table_rows(metrics, kind), run_dir)
    draw(kind, rows, metrics, attributes, target_name, run_dir)
    log.info("%s: %d answers scored; metrics in %s", kind, len(rows), run_dir / "metrics.json")
    return metrics


def draw(kind: str, rows: list[dict[str, Any]], metrics: dict[str, float],
         attributes: dict[str, list[str]], target: str, run_dir: Path) -> Path:
    """Yes-rate bars (decisions) or PRAG* heatmaps (recommendations), titled with the target."""
    from benevaudit.probes.fairdialogue import figures

    cells = sorted({(r["task"], r["attribute"]) for r in rows})
    if kind == "decision":
        panels = {}
        for task, attribute in cells:
            groups = attributes.get(attribute, [])
            valid = [r for r in rows if r["task"] == task and r["attribute"] == attribute
                     and r["decision"] is not None]
            panels[f"{task} · {attribute}"] = {
                g: (sum(r["decision"] == "yes" for r in valid if r["group"] == g),
                    sum(r["group"] == g for r in valid)) for g in groups}
        return figures.rate_bars(panels, f"FairDialogue decisions: yes-rate by group ({target})",
                                 "yes-rate (95% Wilson)", run_dir / "yes_rate.png")
    heat = {}
    for task, attribute in cells:
        groups = attributes.get(attribute) or []
        prefix = f"fairness/{task}/{attribute}/prag/"
        matrix = {(a, b): metrics.get(f"{prefix}{a}__{b}", float("nan"))
                  for a in groups for b in groups if a != b}
        heat[f"{task} · {attribute}"] = (groups, matrix)
    return figures.prag_heatmaps(heat, f"FairDialogue recommendations: PRAG*@K ({target})",
                                 run_dir / "prag.png")
