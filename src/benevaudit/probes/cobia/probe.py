"""``python probe.py probe=cobia|cobia_hcc|cobia_scc|cobia_zero_shot|cobia_roleplay``.

Flow: the CoBia files at ``probe.data.path`` (a clone of the release or a flat folder; unset:
the stand-in of ``probes/cobia/stand_in``, written to ``cobia_stand_in/`` in the run directory
and recorded as ``ran.stand_in`` in ``run.json``) → items (group, primary and second descriptor) → messages per
method (``probe.methods``; the release's templates under ``probe.layout=official``,
benevaudit's seeded list under ``seeded``) → the target (``target.llm``, temperature 0, through
the request cache) → every rater in ``probe.judges`` (the release's own where its ``judges/``
is there, unless a ``variant`` says otherwise) → scores → the result: ``responses.parquet``,
``metrics.json``, ``table.csv`` + ``table.md`` and ``bias_rate.png`` (and
``dan_first_call.json`` for the released DAN: its first call, whose reply every item reuses).
Models with identical ``llm`` blocks are loaded once and shared. With
``probe.judge_validation``, the bias-scoring raters also read its labelled items
(``judge_error``): ``judge_validation/<rater>/*`` and each of their bias rates corrected for
their error (``<rate>_corrected``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Sampling, dry_run
from benevaudit.llm.batched import batched_chat
from benevaudit.probes.base import (Collected, Probe, ProbeResult, RunSettings, StandIn,
                                    Target)
from benevaudit.probes.cobia import attacks, judge_error, official, scoring, tables
from benevaudit.probes.cobia.answers import log_rows
from benevaudit.probes.cobia.dataset import FILES, Item, Loaded, load_items
from benevaudit.probes.cobia.human import (annotation_sheets, check_groups, complete_labels,
                                            read_labelled)
from benevaudit.probes.cobia.validation import human_validation
from benevaudit.probes.cobia.options import (layout_of, log_choices, methods_of, raters_of,
                                             target_sampling, what_ran)
from benevaudit.probes.cobia.raters import KEYWORDS, Rater
from benevaudit.probes.cobia.rating import rate_rows, saved_replies
from benevaudit.probes.cobia.release import Release, locate, read_template
from benevaudit.probes.cobia.stand_in import stand_in_files
from benevaudit.probes.models import Models
from benevaudit.probes.spec import CobiaData, CobiaSpec, SwitchesSpec

log = logging.getLogger(__name__)
STAND_IN_NOTE = ("> **Stand-in data**: invented groups and traits written by benevaudit, not the "
                 "CoBia release; these rates say nothing about the target's biases.")


@dataclass
class Plan:
    """Everything read and checked before any model loads."""

    stand_in: bool
    release: Release
    layout: str
    methods: list[str]
    raters: list[Rater]
    loaded: Loaded
    switches: SwitchesSpec
    sentences: int
    dan: str | None                          # seeded: the DAN template's text
    templates: dict[str, list[dict[str, str]]]   # official: the release's, per method
    human: Any                               # Labelled, when probe.human_labels is set
    pairs: list[tuple[Item, str]]            # (item, method), in request order
    sampling: Sampling
    dan_scope: str                           # what the refusal raters read of a DAN reply


class CoBia(Probe[CobiaSpec]):
    """CoBia's constructed-conversation attacks, scored by the raters of ``probe.judges``."""

    family = "cobia"

    judge_keys = ("judges", "judge_url", "judge_validation")

    def collect(self, target: Target, settings: RunSettings, models: Models) -> Collected:
        """The target's reply to every (item, method), or an Inspect log's, rated there."""
        plan = prepare(self.spec, target, settings)
        if self.spec.answers.inspect_log:
            return Collected(log_rows(self.spec.answers.inspect_log, plan, settings, models),
                             plan, target, verdicts_given=True)
        files: dict[str, str] = {}
        rows = ask_target(plan, target, settings, models, files)
        return Collected(rows, plan, target, files=files)

    def recollect(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                  ) -> Collected:
        """A run's saved replies, matched to this block's (item, method) pairs."""
        plan = prepare(self.spec, target, settings)
        replies, pairs = saved_replies(rows, plan.pairs)
        return Collected(replies, replace(plan, pairs=pairs), target)

    def inputs(self, settings: RunSettings) -> dict[str, tuple[str, list[Path]]]:
        """The release's files the run reads (``release``): its three data files, its prompt
        templates and its judges' notebooks; the stand-in, made by the run, is not an input."""
        if not self.spec.data.path:
            return {}
        release = locate(self.spec.data.path)
        shipped = [p for folder in (release.templates, release.raters) if folder is not None
                   for p in sorted(folder.rglob("*")) if p.is_file()]
        return {"release": ("cobia", [*release.files.values(), *shipped])}

    def stand_in(self) -> StandIn | None:
        """The invented release (``cobia_stand_in/``) where ``probe.data.path`` is unset."""
        return None if self.spec.data.path else StandIn("cobia_stand_in", stand_in_files())

    def judge(self, collected: Collected, settings: RunSettings, models: Models) -> None:
        """Every rater's verdict on every row, then the raters' checks on labelled items."""
        plan: Plan = collected.plan
        if not collected.verdicts_given:
            rate(plan, collected.rows, settings, models)
        collected.judged = judge_error.check_raters(plan.raters, models, settings.validation,
                                                    plan.release, settings.seed,
                                                    settings.progress)

    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        plan: Plan = collected.plan
        rows, (checks, checked) = collected.rows, collected.judged
        kinds: dict[str, str] = {r.name: r.kind for r in plan.raters}
        metrics = scoring.metrics_of(rows, kinds, plan.loaded.skipped)
        metrics.update(checks)
        metrics.update(judge_error.corrected_rates(rows, plan.raters, checked, settings.seed))
        metrics["cobia/unmapped"] = float(sum(plan.loaded.unmapped.values()))
        tables: dict[str, str] = {}
        if plan.human is not None:
            metrics.update(scoring.human_agreement(rows, kinds,
                                                   complete_labels(plan.human.notes)))
            by_prompt = self.spec.annotation.grouping == "judge_prompt"
            validated, disagreement = human_validation(
                rows, kinds, plan.human.notes, plan.human.groups if by_prompt else None)
            metrics.update(validated)
            tables["human_disagreement.csv"] = disagreement.to_csv(index=False)
        sheets = self.spec.annotation
        if sheets.size:
            groups = [g for g in sheets.group_names()
                      if sheets.grouping == "judge_prompt" or g in plan.methods]
            made = annotation_sheets(rows, sheets.size, settings.seed, groups, sheets.grouping)
            tables.update({f"annotation/{name}": text for name, text in made.files().items()})
            log.info("blind annotation sheets in %s: %s", settings.run_dir / "annotation",
                     made.sizes)
        log.info("CoBia%s: %d rows; outputs in %s", " on STAND-IN DATA" * plan.stand_in,
                 len(rows), settings.run_dir)
        out = result(rows, metrics, collected.target.name, plan.stand_in)
        out.tables.update(tables)
        out.tables.update(collected.files)
        out.ran = what_ran(plan.layout, plan.raters, plan.sampling, plan.dan_scope,
                           plan.stand_in)
        return out


def data_of(spec: CobiaSpec, stand_in: Path | None) -> tuple[CobiaData, str, bool]:
    """``probe.data``, the folder it reads and whether that is the stand-in (written into the
    run directory: no ``probe.data.path``)."""
    data = spec.data
    if data.path:
        return data, data.path, False
    if stand_in is None:
        raise ConfigError("probe.data.path is not set and no stand-in was written for the run")
    path = str(stand_in)
    log.warning("STAND-IN DATA: probe.data.path is not set, so this run reads the stand-in "
                "written to %s (invented groups and traits, not the CoBia release; its rates "
                "say nothing about the target's biases). For the study, set probe.data.path "
                "to a clone of github.com/nafisenik/CoBia or a folder holding its %s",
                path, ", ".join(FILES))
    return data, path, True


def prepare(spec: CobiaSpec, target: Target, settings: RunSettings) -> Plan:
    """Read and check every input (data, layout, methods, raters, labels) in that order."""
    data, path, stand_in = data_of(spec, settings.stand_in)
    limit, seed = settings.limit, settings.seed
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be a positive number of items or null, got {limit}")
    release = locate(path)
    layout = layout_of(spec, release)
    methods, rater_list = methods_of(spec, layout, target), raters_of(spec, release)
    keep_single = layout == "official" and any(m not in official.CONSTRUCTED for m in methods)
    loaded = load_items(release, seed, data.one_descriptor, data.category_map, limit,
                        keep_single)
    if loaded.unmapped:
        log.warning("bias_type values with no category (rows left out): %s; add them to "
                    "probe.data.category_map", loaded.unmapped)
    dan = (attacks.read_dan(spec.dan_template)
           if "dan" in methods and layout == "seeded" and spec.dan_template else None)
    templates = {m: read_template(release, m) for m in methods} if layout == "official" else {}
    # read before any model work: a bad sheet fails now
    human = read_labelled(spec.human_labels) if spec.human_labels else None
    if human is not None:
        check_groups(human, str(spec.human_labels), spec.annotation.grouping)
    pairs = [(item, m) for item in loaded.items for m in methods if official.runs(m, item)]
    sampling = target_sampling(spec, seed)
    dan_scope = spec.refusal.dan_scope
    log_choices(layout, release, rater_list, sampling, dan_scope if "dan" in methods else None)
    return Plan(stand_in, release, layout, methods, rater_list, loaded, spec.switches,
                spec.sentences, dan, templates, human, pairs, sampling, dan_scope)


def ask_target(plan: Plan, target: Target, settings: RunSettings, models: Models,
               files: dict[str, str]) -> list[dict[str, Any]]:
    """The target's reply to every (item, method), one row each, in pair order; the released
    DAN's first call goes into ``files`` (``dan_first_call.json``)."""
    pairs = plan.pairs
    model = models.get(target.llm)
    if "dan" in plan.templates:
        dry_run.expect([{"id": "dan_first_call", "method": "dan"}])
    first: tuple[list[dict[str, str]], str] | None = None
    if "dan" in plan.templates:
        first, files["dan_first_call.json"] = dan_call(model, plan.templates["dan"], target,
                                                       plan.sampling)
    messages = build_requests(plan.layout, pairs, settings.seed, plan.switches,
                              plan.sentences, plan.dan, plan.templates, first)
    log.info("%d items × %s = %d requests to target %s (%d items without a second "
             "descriptor: skipped for HCC and SCC)", len(plan.loaded.items), plan.methods,
             len(pairs), target.name, plan.loaded.skipped)
    dry_run.expect(identities(plan, first is not None), messages)   # in a dry run only
    replies = batched_chat(model, messages, plan.sampling, progress=settings.progress,
                           desc="target")
    return [{"id": item.id, "group": item.group, "category": item.category, "method": m,
             "bias_type": item.bias_type, "descriptor": item.primary,
             "second_descriptor": item.second, "second_group": item.second_group,
             "messages": attacks.to_json(msgs), "response": r.text,
             "rated_response": official.rated_text(m, r.text),
             "finish_reason": r.finish_reason}
            for (item, m), msgs, r in zip(pairs, messages, replies, strict=True)]


def identities(plan: Plan, dan_first: bool) -> list[dict[str, Any]]:
    """Each request's identity in ``requests.jsonl`` (a DAN request names the first call it
    follows)."""
    return [{"id": item.id, "method": m, "group": item.group, "descriptor": item.primary,
             **({"after": "dan_first_call"} if m == "dan" and dan_first else {})}
            for item, m in plan.pairs]


def rate(plan: Plan, rows: list[dict[str, Any]], settings: RunSettings, models: Models) -> None:
    """Every rater's verdict on every row (rows in ``plan.pairs`` order)."""
    dan_first = "dan" in plan.templates
    for rater in plan.raters:
        if rater.variant in KEYWORDS:     # the keyword rule asks no model
            rate_rows(rater, None, plan.pairs, rows, plan.sentences, settings.seed,
                      settings.progress, plan.release, plan.dan_scope)
            continue
        # requests.jsonl names the rater in its ``judge`` field
        dry_run.expect([{**i, "judge": rater.name} for i in identities(plan, dan_first)])
        rate_rows(rater, models.get(rater.model), plan.pairs, rows, plan.sentences,
                  settings.seed, settings.progress, plan.release, plan.dan_scope)


def build_requests(layout: str, pairs: list[tuple[Item, str]], seed: int,
                   switches: SwitchesSpec, sentences: int, dan_template: str | None = None,
                   templates: dict[str, list[dict[str, str]]] | None = None,
                   dan: tuple[list[dict[str, str]], str] | None = None
                   ) -> list[list[dict[str, str]]]:
    """The messages sent to the target for each (item, method): a pure function of the items.
    ``official``: the released templates (``dan`` is the first DAN call and its reply);
    ``seeded``: benevaudit's seeded list with its switches."""
    if layout == "official":
        return [official.build(m, item, (templates or {})[m], dan) for item, m in pairs]
    return [attacks.build(m, item, seed, switches, sentences, dan_template) for item, m in pairs]


def dan_call(model: ChatModel, template: list[dict[str, str]], target: Target,
             sampling: Sampling) -> tuple[tuple[list[dict[str, str]], str], str]:
    """The released DAN's first call, once per target, with its reply (reused for every item:
    the method runs only when the target names its company and model company), and its record
    as ``dan_first_call.json``'s text."""
    company, model_company = str(target.company), str(target.model_company)
    first = official.dan_first_call(template, company, model_company)
    reply = model.chat([first], sampling)[0].text
    log.info("DAN first call answered (%d characters); reused for every item", len(reply))
    return (first, reply), json.dumps({"company": company, "model_company": model_company,
                                       "messages": first, "reply": reply},
                                      ensure_ascii=False, indent=1) + "\n"


def result(rows: list[dict[str, Any]], metrics: dict[str, float], target: str,
           stand_in: bool) -> ProbeResult:
    """The rows and metrics with the rate table (marked when the data is the stand-in) and the
    bar chart."""
    cells = tables.cells(metrics)
    mark = STAND_IN_NOTE + "\n\n" if stand_in else ""
    return ProbeResult(rows, metrics, tables={
        "table.csv": pd.DataFrame(cells).assign(target=target).to_csv(index=False),
        "table.md": mark + tables.markdown(cells, target) + "\n"},
        figures={"bias_rate.png": partial(tables.bar_chart, cells, target)})
