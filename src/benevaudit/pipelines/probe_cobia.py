"""``python probe.py probe=cobia|cobia_hcc|cobia_scc|cobia_zero_shot|cobia_roleplay``.

Flow: the CoBia files at ``probe.data.path`` (unset: the stand-in of ``probes/cobia/stand_in``,
written to ``cobia_stand_in/`` in the run directory and marked ``cobia/stand_in`` = 1) → items
(group, primary and second descriptor) → messages per method (``probe.methods``) → the target
(``target.llm``, temperature 0, through the request cache) → every judge in ``probe.judges``
(each its own ``llm`` block) → scores → the run directory: ``responses.parquet``,
``metrics.json``, ``table.csv`` + ``table.md`` and ``bias_rate.png``. Models with identical
``llm`` blocks are loaded once and shared.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Sampling, build_from_block, dry_run
from benevaudit.pipelines.config import output_dir, plain, write_metrics
from benevaudit.probes.cobia import attacks, judges as judging, scoring, tables
from benevaudit.probes.cobia.dataset import FILES, load_items
from benevaudit.probes.cobia.stand_in import write_stand_in

log = logging.getLogger(__name__)
STAND_IN_NOTE = ("> **Stand-in data**: invented groups and traits written by benevaudit, not the "
                 "CoBia release; these rates say nothing about the target's biases.")


class Models:
    """One loaded model per distinct ``llm`` block: the embedded defaults load SmolLM2 once."""

    def __init__(self, cache: str | None) -> None:
        self.cache, self.loaded = cache, {}

    def get(self, block: dict[str, Any]) -> ChatModel:
        key = json.dumps(block, sort_keys=True)
        if key not in self.loaded:
            self.loaded[key] = build_from_block(block, cache=self.cache)
        return self.loaded[key]

    def close(self) -> None:
        for model in self.loaded.values():
            model.close()
        self.loaded.clear()


def methods_of(p: dict[str, Any]) -> list[str]:
    """``probe.methods``, with ``dan`` dropped when no template is given (none ships)."""
    methods = list(p.get("methods") or [])
    unknown = [m for m in methods if m not in attacks.METHODS]
    if unknown or not methods:
        raise ConfigError(f"probe.methods: unknown or empty {unknown or methods}; valid methods: "
                          f"{list(attacks.METHODS)}")
    if "dan" in methods and not p.get("dan_template"):
        log.info("method dan left out: no probe.dan_template given")
        methods.remove("dan")
    return methods


def judge_llm(kind: str, block: dict[str, Any]) -> dict[str, Any]:
    """The judge's llm block; a guard judge on Granite Guardian's own weights gets the role-only
    template, since its shipped template would wrap the already-built guard prompt again."""
    from benevaudit.detectors.templates import template_for

    block = dict(block)
    if (kind == "guard" and not block.get("chat_template")
            and "granite-guardian" in str(block.get("model", "")).lower()):
        block["chat_template"] = template_for("granite_guardian")
    return block


def judges_of(p: dict[str, Any]) -> list[judging.Judge]:
    out = []
    for name, spec in (p.get("judges") or {}).items():
        if not isinstance(spec, dict):
            raise ConfigError(f"probe.judges.{name}: expected a mapping with kind and llm")
        kind = spec.get("kind", name)
        out.append(judging.Judge(name, kind, judge_llm(kind, dict(spec.get("llm") or {})),
                                 int(spec.get("max_tokens", 16)), spec.get("mode", "generate")))
    if not out:
        raise ConfigError("probe.judges is empty; CoBia needs at least one judge")
    return out


def ask_target(model: ChatModel, conversations: list[list[dict[str, str]]], sampling: Sampling,
               progress: bool, chunk: int = 16) -> list[Any]:
    """Replies in order, sent in chunks so the cache fills as the run goes."""
    from tqdm.auto import tqdm

    out: list[Any] = []
    for start in tqdm(range(0, len(conversations), chunk), disable=not progress, desc="target",
                      unit=f"×{chunk}"):
        out.extend(model.chat(conversations[start:start + chunk], sampling))
    return out


def judge_rows(judge: judging.Judge, model: ChatModel, pairs: list[tuple[Any, str]],
               rows: list[dict[str, Any]], sentences: int, seed: int, progress: bool) -> None:
    """Add ``<judge>_verdict`` and ``<judge>_raw`` to every row, in row (item) order."""
    prompts = [judging.judge_prompt(
        judge.kind, attacks.explicit_question(item, sentences), row["response"],
        f"{item.group} are {item.primary} because they are {item.second}.")
        for (item, _), row in zip(pairs, rows, strict=True)]
    verdicts = judging.ask(judge, model, prompts, seed, progress=progress)
    for row, v in zip(rows, verdicts, strict=True):
        row[f"{judge.name}_verdict"], row[f"{judge.name}_raw"] = v.verdict, v.raw


def run(cfg: DictConfig) -> dict[str, float]:
    started = time.perf_counter()
    run_dir = output_dir(cfg)
    p = plain(cfg.probe)
    data = p.get("data") or {}
    stand_in = not data.get("path")
    if stand_in:
        data = {**data, "path": str(write_stand_in(run_dir / "cobia_stand_in"))}
        log.warning("STAND-IN DATA: probe.data.path is not set, so this run reads the stand-in "
                    "written to %s (invented groups and traits, not the CoBia release; its rates "
                    "say nothing about the target's biases). For the study, set probe.data.path "
                    "to a clone of github.com/nafisenik/CoBia or a folder holding its %s",
                    data["path"], ", ".join(FILES))
    limit = None if cfg.get("limit") is None else int(cfg.limit)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of items or null, got {limit}")
    seed, progress = int(cfg.seed), bool(cfg.get("progress", True))
    methods, judge_list = methods_of(p), judges_of(p)
    loaded = load_items(data["path"], seed, data.get("one_descriptor", "skip"),
                        data.get("category_map"), limit)
    if loaded.unmapped:
        log.warning("bias_type values with no category (rows left out): %s; add them to "
                    "probe.data.category_map", loaded.unmapped)
    switches = attacks.Switches(**(p.get("switches") or {}))
    sentences = int(p.get("sentences", 10))
    dan = attacks.read_dan(p["dan_template"]) if "dan" in methods else None
    human = None
    if p.get("human_labels"):               # read before any model work: a bad sheet fails now
        from benevaudit.probes.cobia.human import read_labels

        human = read_labels(p["human_labels"])
    pairs = [(item, m) for item in loaded.items for m in methods]
    messages = [attacks.build(m, item, seed, switches, sentences, dan) for item, m in pairs]
    target = plain(cfg.target)
    models = Models(cfg.get("llm_cache"))
    try:
        sampling = Sampling(temperature=0.0, max_tokens=int(p.get("max_tokens", 128)), seed=seed)
        log.info("%d items × %s = %d requests to target %s (%d items skipped: one descriptor)",
                 len(loaded.items), methods, len(pairs), target.get("name"), loaded.skipped)
        identities = [{"id": item.id, "method": m, "group": item.group,
                       "descriptor": item.primary} for item, m in pairs]
        dry_run.expect(identities, messages)       # request identity, in a dry run only
        replies = ask_target(models.get(target["llm"]), messages, sampling, progress)
        rows = [{"id": item.id, "group": item.group, "category": item.category, "method": m,
                 "bias_type": item.bias_type, "descriptor": item.primary,
                 "second_descriptor": item.second, "second_group": item.second_group,
                 "messages": attacks.to_json(msgs), "response": r.text,
                 "finish_reason": r.finish_reason}
                for (item, m), msgs, r in zip(pairs, messages, replies, strict=True)]
        for judge in judge_list:
            dry_run.expect([{**i, "judge": judge.name} for i in identities])
            judge_rows(judge, models.get(judge.llm), pairs, rows, sentences, seed, progress)
    finally:
        models.close()
    kinds = {j.name: j.kind for j in judge_list}
    metrics = scoring.metrics_of(rows, kinds, loaded.skipped)
    metrics["cobia/unmapped"] = float(sum(loaded.unmapped.values()))
    metrics["cobia/stand_in"] = float(stand_in)
    if human is not None:
        metrics.update(scoring.human_agreement(rows, kinds, human))
    write_outputs(rows, metrics, str(target.get("name", "target")), run_dir)
    log.info("CoBia%s: %d rows in %.0f s; outputs in %s", " on STAND-IN DATA" * stand_in,
             len(rows), time.perf_counter() - started, run_dir)
    return metrics


def write_outputs(rows: list[dict[str, Any]], metrics: dict[str, float], target: str,
                  run_dir: Path) -> None:
    pd.DataFrame(rows).to_parquet(run_dir / "responses.parquet", index=False)
    write_metrics(metrics, run_dir / "metrics.json")
    cells = tables.cells(metrics)
    pd.DataFrame(cells).assign(target=target).to_csv(run_dir / "table.csv", index=False)
    mark = STAND_IN_NOTE + "\n\n" if metrics.get("cobia/stand_in") else ""
    (run_dir / "table.md").write_text(mark + tables.markdown(cells, target) + "\n")
    tables.bar_chart(cells, target, run_dir / "bias_rate.png")
