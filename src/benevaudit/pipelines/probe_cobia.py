"""``python probe.py probe=cobia|cobia_hcc|cobia_scc|cobia_zero_shot|cobia_roleplay``.

Flow: the CoBia files at ``probe.data.path`` (a clone of the release or a flat folder; unset:
the stand-in of ``probes/cobia/stand_in``, written to ``cobia_stand_in/`` in the run directory
and marked ``cobia/stand_in`` = 1) → items (group, primary and second descriptor) → messages per
method (``probe.methods``; the release's templates under ``probe.layout=official``,
benevaudit's seeded list under ``seeded``) → the target (``target.llm``, temperature 0, through
the request cache) → every judge in ``probe.judges`` (the release's own where its ``judges/``
is there, unless a ``variant`` says otherwise) → scores → the run directory:
``responses.parquet``, ``metrics.json``, ``table.csv`` + ``table.md`` and ``bias_rate.png``
(and ``dan_first_call.json`` for the released DAN). Models with identical ``llm`` blocks are
loaded once and shared.
"""

from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Sampling, build_from_block, dry_run
from benevaudit.pipelines.config import output_dir, plain, write_metrics
from benevaudit.probes.cobia import attacks, judges as judging, official, scoring, tables
from benevaudit.probes.cobia.dataset import FILES, Item, load_items
from benevaudit.probes.cobia.rating import judge_rows
from benevaudit.probes.cobia.release import Release, locate, read_template
from benevaudit.probes.cobia.stand_in import write_stand_in

log = logging.getLogger(__name__)
RELEASED = ("release", "granite_release", "keywords_release")    # the judges as released
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


LAYOUTS = ("official", "seeded")


def layout_of(p: dict[str, Any], release: Release) -> str:
    """``probe.layout``; ``auto`` is ``official`` when the release's prompt-templates/ is there."""
    layout = p.get("layout") or "auto"
    if layout not in ("auto", *LAYOUTS):
        raise ConfigError(f"probe.layout must be one of {['auto', *LAYOUTS]}, got {layout!r}")
    if layout == "auto":
        return "official" if release.templates is not None else "seeded"
    if layout == "official" and release.templates is None:
        raise ConfigError(f"probe.layout=official needs the release's prompt-templates/ under "
                          f"{release.root}; give a clone of the CoBia repository or use "
                          "probe.layout=seeded")
    return layout


def methods_of(p: dict[str, Any], layout: str = "seeded",
               target: dict[str, Any] | None = None) -> list[str]:
    """``probe.methods``, with ``dan`` dropped when it cannot run: without probe.dan_template
    (seeded), or without target.company and target.model_company (the released DAN)."""
    methods = list(p.get("methods") or [])
    unknown = [m for m in methods if m not in attacks.METHODS]
    if unknown or not methods:
        raise ConfigError(f"probe.methods: unknown or empty {unknown or methods}; valid methods: "
                          f"{list(attacks.METHODS)}")
    if "dan" in methods and layout == "official":
        if not ((target or {}).get("company") and (target or {}).get("model_company")):
            log.info("method dan left out: the released DAN names the target's maker; set "
                     "target.company and target.model_company")
            methods.remove("dan")
    elif "dan" in methods and not p.get("dan_template"):
        log.info("method dan left out: no probe.dan_template given")
        methods.remove("dan")
    return methods


def judge_llm(kind: str, block: dict[str, Any], variant: str | None = None) -> dict[str, Any]:
    """The judge's llm block; a ``social_bias`` guard judge on Granite Guardian's own weights
    gets the role-only template, since its shipped template would wrap the already-built guard
    prompt again (the released 3.0 judge keeps the model's own template)."""
    from benevaudit.llm.role_templates import template_for

    block = dict(block)
    if (kind == "guard" and variant != "granite_release" and not block.get("chat_template")
            and "granite-guardian" in str(block.get("model", "")).lower()):
        block["chat_template"] = template_for("granite_guardian")
    return block


def judges_of(p: dict[str, Any], release: Release | None = None) -> list[judging.Judge]:
    """The judges; ``variant: auto`` is the release's own when its judges/ is there, else
    benevaudit's. Asking for a variant read from judges/ without that folder is an error."""
    out = []
    for name, spec in (p.get("judges") or {}).items():
        if not isinstance(spec, dict):
            raise ConfigError(f"probe.judges.{name}: expected a mapping with kind and llm")
        kind = spec.get("kind", name)
        if kind not in judging.KINDS:
            raise ConfigError(f"probe.judges.{name}.kind must be one of {list(judging.KINDS)}, "
                              f"got {kind!r}")
        variant = spec.get("variant") or "auto"
        has_files = release is not None and release.judges is not None
        if variant == "auto":
            variant = judging.VARIANTS[kind][0 if has_files else -1]
        if variant in judging.FROM_FILES and not has_files:
            where = release.root if release is not None else "probe.data.path"
            raise ConfigError(f"probe.judges.{name}.variant={variant} reads the release's "
                              f"judges/ folder, which {where} lacks; use variant=auto or "
                              f"{judging.VARIANTS[kind][-1]}")
        cap = spec.get("max_tokens", 16)
        out.append(judging.Judge(name, kind, judge_llm(kind, dict(spec.get("llm") or {}), variant),
                                 None if cap is None else int(cap), spec.get("mode", "generate"),
                                 variant, float(spec.get("top_p", 1.0))))
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


def build_requests(layout: str, pairs: list[tuple[Item, str]], seed: int,
                   switches: attacks.Switches, sentences: int, dan_template: str | None = None,
                   templates: dict[str, list[dict[str, str]]] | None = None,
                   dan: tuple[list[dict[str, str]], str] | None = None
                   ) -> list[list[dict[str, str]]]:
    """The messages sent to the target for each (item, method): a pure function of the items.
    ``official``: the released templates (``dan`` is the first DAN call and its reply);
    ``seeded``: benevaudit's seeded list with its switches."""
    if layout == "official":
        return [official.build(m, item, (templates or {})[m], dan) for item, m in pairs]
    return [attacks.build(m, item, seed, switches, sentences, dan_template) for item, m in pairs]


def dan_call(model: ChatModel, template: list[dict[str, str]], target: dict[str, Any],
             sampling: Sampling, run_dir: Path) -> tuple[list[dict[str, str]], str]:
    """The released DAN's first call, once per target; its reply is saved and reused."""
    first = official.dan_first_call(template, str(target["company"]),
                                    str(target["model_company"]))
    reply = model.chat([first], sampling)[0].text
    (run_dir / "dan_first_call.json").write_text(json.dumps(
        {"company": target["company"], "model_company": target["model_company"],
         "messages": first, "reply": reply}, ensure_ascii=False, indent=1) + "\n")
    log.info("DAN first call answered (%d characters); reused for every item", len(reply))
    return first, reply


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
    seed, progress, target = int(cfg.seed), bool(cfg.get("progress", True)), plain(cfg.target)
    release = locate(data["path"])
    layout = layout_of(p, release)
    methods, judge_list = methods_of(p, layout, target), judges_of(p, release)
    keep_single = layout == "official" and any(m not in official.CONSTRUCTED for m in methods)
    loaded = load_items(release, seed, data.get("one_descriptor", "skip"),
                        data.get("category_map"), limit, keep_single)
    if loaded.unmapped:
        log.warning("bias_type values with no category (rows left out): %s; add them to "
                    "probe.data.category_map", loaded.unmapped)
    switches = attacks.Switches(**(p.get("switches") or {}))
    sentences = int(p.get("sentences", 10))
    dan = attacks.read_dan(p["dan_template"]) if "dan" in methods and layout == "seeded" else None
    templates = {m: read_template(release, m) for m in methods} if layout == "official" else {}
    human = None
    if p.get("human_labels"):               # read before any model work: a bad sheet fails now
        from benevaudit.probes.cobia.human import read_labels

        human = read_labels(p["human_labels"])
    pairs = [(item, m) for item in loaded.items for m in methods if official.runs(m, item)]
    sampling = target_sampling(p, seed)
    log_choices(layout, release, judge_list, sampling)
    models = Models(cfg.get("llm_cache"))
    try:
        model = models.get(target["llm"])
        if "dan" in templates:
            dry_run.expect([{"id": "dan_first_call", "method": "dan"}])
        first = (dan_call(model, templates["dan"], target, sampling, run_dir)
                 if "dan" in templates else None)
        messages = build_requests(layout, pairs, seed, switches, sentences, dan, templates, first)
        log.info("%d items × %s = %d requests to target %s (%d items without a second "
                 "descriptor: skipped for HCC and SCC)", len(loaded.items), methods, len(pairs),
                 target.get("name"), loaded.skipped)
        identities = [{"id": item.id, "method": m, "group": item.group,
                       "descriptor": item.primary,
                       **({"after": "dan_first_call"} if m == "dan" and first else {})}
                      for item, m in pairs]
        dry_run.expect(identities, messages)       # request identity, in a dry run only
        replies = ask_target(model, messages, sampling, progress)
        rows = [{"id": item.id, "group": item.group, "category": item.category, "method": m,
                 "bias_type": item.bias_type, "descriptor": item.primary,
                 "second_descriptor": item.second, "second_group": item.second_group,
                 "messages": attacks.to_json(msgs), "response": r.text,
                 "rated_response": official.rated_text(m, r.text),
                 "finish_reason": r.finish_reason}
                for (item, m), msgs, r in zip(pairs, messages, replies, strict=True)]
        for judge in judge_list:
            if judge.variant in judging.KEYWORDS:     # the keyword rule asks no model
                judge_rows(judge, None, pairs, rows, sentences, seed, progress, release)
                continue
            dry_run.expect([{**i, "judge": judge.name} for i in identities])
            judge_rows(judge, models.get(judge.llm), pairs, rows, sentences, seed, progress,
                       release)
    finally:
        models.close()
    kinds = {j.name: j.kind for j in judge_list}
    metrics = scoring.metrics_of(rows, kinds, loaded.skipped)
    metrics["cobia/unmapped"] = float(sum(loaded.unmapped.values()))
    metrics.update(provenance(layout, judge_list, sampling))
    metrics["cobia/stand_in"] = float(stand_in)
    if human is not None:
        metrics.update(scoring.human_agreement(rows, kinds, human))
    write_outputs(rows, metrics, str(target.get("name", "target")), run_dir)
    log.info("CoBia%s: %d rows in %.0f s; outputs in %s", " on STAND-IN DATA" * stand_in,
             len(rows), time.perf_counter() - started, run_dir)
    return metrics


def target_sampling(p: dict[str, Any], seed: int) -> Sampling:
    """The release's decoding: temperature 0 and top_p 0 (greedy where a backend refuses
    top_p 0), no reply cap unless ``probe.max_tokens`` sets one."""
    cap = p.get("max_tokens")
    return Sampling(temperature=0.0, top_p=float(p.get("top_p", 0.0)),
                    max_tokens=None if cap is None else int(cap), seed=seed)


def log_choices(layout: str, release: Release, judge_list: list[judging.Judge],
                sampling: Sampling) -> None:
    """Say where the run departs from the release: layout, raters, reply cap."""
    log.info("CoBia layout %s from %s (%s)", layout, release.root,
             "a clone of the release" if release.clone else "a flat folder")
    variants = ", ".join(f"{j.name}={j.variant}" for j in judge_list)
    if release.judges is None:
        log.warning("no judges/ under %s: benevaudit's own raters run (%s)", release.root,
                    variants)
    else:
        log.info("judges (variant): %s; the release's read from %s", variants, release.judges)
    if sampling.max_tokens is not None:
        log.warning("target replies capped at %d tokens: a departure from the release, which "
                    "sets no cap (probe.max_tokens=null for none)", sampling.max_tokens)


def provenance(layout: str, judge_list: list[judging.Judge],
               sampling: Sampling) -> dict[str, float]:
    """What ``metrics.json`` records of the run's choices: 1 = as released."""
    out = {"cobia/layout_official": float(layout == "official"),
           "cobia/reply_cap_tokens": (math.nan if sampling.max_tokens is None
                                      else float(sampling.max_tokens))}
    for j in judge_list:
        out[f"cobia/released_judge/{j.name}"] = float(j.variant in RELEASED)
    return out


def write_outputs(rows: list[dict[str, Any]], metrics: dict[str, float], target: str,
                  run_dir: Path) -> None:
    pd.DataFrame(rows).to_parquet(run_dir / "responses.parquet", index=False)
    write_metrics(metrics, run_dir / "metrics.json")
    cells = tables.cells(metrics)
    pd.DataFrame(cells).assign(target=target).to_csv(run_dir / "table.csv", index=False)
    mark = STAND_IN_NOTE + "\n\n" if metrics.get("cobia/stand_in") else ""
    (run_dir / "table.md").write_text(mark + tables.markdown(cells, target) + "\n")
    tables.bar_chart(cells, target, run_dir / "bias_rate.png")
