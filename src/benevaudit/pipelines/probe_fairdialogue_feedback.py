"""``python probe.py probe=fairdialogue_feedback``: push back on "no" and see who gets a yes.

The decision scenarios are asked under every group first (the same requests as
``fairdialogue_decision``, so a cached decision run makes this step free). The items are those
every model answered no, in two phases: ``fairdialogue_decision`` runs for every target, then
``probe.feedback.items_from=[their run directories]``: an item enters when every listed run
answered no under every group of its attribute. Without ``items_from`` the target's own
answers pick the items (said in the log, and ``fairness/feedback/items_from_runs`` is 0). Each
group's conversation then gets up to four pushback turns, starting from the target's own "no"
(a conversation whose first answer was not no is left out and counted). Metrics:
``fairness/feedback/<attribute>/<group>/rst`` and ``.../anr`` (with ``.../n`` and
``.../revised``), ``fairness/feedback/<attribute>/items`` and ``.../first_not_no``,
``fairness/feedback/items_from_runs``, and the first round's ``parse/<task>/invalid|refused``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from benevaudit.errors import ConfigError
from benevaudit.llm import dry_run
from benevaudit.metrics.fairness import persistence
from benevaudit.pipelines.config import write_metrics
from benevaudit.pipelines.probe_fairdialogue import collect, sampling_of, write_tables
from benevaudit.probes.fairdialogue import scoring
from benevaudit.probes.fairdialogue.feedback import PUSHBACKS, Item, negative_items, run_feedback

DECISION_COLUMNS = ("task", "attribute", "item", "group", "decision")


def run_dirs(value: Any) -> list[Path]:
    """``probe.feedback.items_from`` as a list of paths (one string is one directory)."""
    if value is None:
        return []
    return [Path(str(v)) for v in ([value] if isinstance(value, str) else list(value))]


def shared_negative_items(dirs: list[Path], attributes: dict[str, list[str]],
                          tasks: list[str]) -> set[Item]:
    """The items every listed decision run answered no under every group of the attribute.

    Each directory must be a ``probe=fairdialogue_decision`` run whose ``responses.parquet``
    holds every task and every group of the feedback probe's attributes."""
    chosen: set[Item] | None = None
    for d in dirs:
        file = d / "responses.parquet"
        if not file.is_file():
            raise ConfigError(f"probe.feedback.items_from: {d} has no responses.parquet; list the "
                              "run directories of probe=fairdialogue_decision runs")
        table = pd.read_parquet(file)
        missing = [c for c in DECISION_COLUMNS if c not in table.columns]
        if missing:
            raise ConfigError(f"probe.feedback.items_from: {file} lacks columns {missing}; it is "
                              "not a probe=fairdialogue_decision run")
        for attribute, groups in attributes.items():
            have = set(table.loc[table["attribute"] == attribute, "group"])
            lacking = [g for g in groups if g not in have]
            if lacking:
                raise ConfigError(
                    f"probe.feedback.items_from: {d} has no answers for {attribute} groups "
                    f"{lacking} (its attributes: {sorted(set(table['attribute']))}); run "
                    "probe=fairdialogue_decision with the feedback probe's probe.attributes")
        absent = [t for t in tasks if t not in set(table["task"])]
        if absent:
            raise ConfigError(f"probe.feedback.items_from: {d} has no answers for tasks {absent}; "
                              f"its tasks: {sorted(set(table['task']))}")
        items = negative_items(table.to_dict("records"), attributes)
        chosen = items if chosen is None else chosen & items
    return chosen or set()


def starting_points(rows: list[dict[str, Any]], conversations: list[Any], chosen: set[Item],
                    every: bool = False
                    ) -> tuple[list[tuple[tuple[str, ...], Any, str]], dict[str, int]]:
    """Each group's conversation of a chosen item with this target's own first "no" to push
    back on; the others are counted per attribute (their first answer was not no). ``every``
    (a dry run, whose answers are placeholders) starts every conversation: the upper bound."""
    starts, not_no = [], defaultdict(int)
    for r, conv in zip(rows, conversations, strict=True):
        key = (r["task"], r["attribute"], r["item"])
        if not every and key not in chosen:
            continue
        if every or r["decision"] == "no":
            starts.append(((*key, r["group"]), conv, r["answer"]))
        else:
            not_no[r["attribute"]] += 1
    return starts, not_no


def persistence_rows(traces: list[Any], attributes: dict[str, list[str]]
                     ) -> list[dict[str, Any]]:
    """RST and ANR (with n and revised) per (attribute, group), from the traces."""
    table = []
    for attribute, groups in attributes.items():
        for g in groups:
            result = persistence([t.revised_at for t in traces
                                  if t.key[1] == attribute and t.key[3] == g])
            table.append({"attribute": attribute, "group": g, "n": result.n,
                          "revised": result.revised, "rst": result.rst, "anr": result.anr})
    return table


def run_feedback_probe(cfg: DictConfig, p: dict[str, Any], attributes: dict[str, list[str]],
                       run_dir: Path, target_name: str) -> dict[str, float]:
    log = logging.getLogger(__name__)
    if (p.get("answers") or {}).get("path"):
        raise ConfigError("probe=fairdialogue_feedback talks to the target over several turns; "
                          "probe.answers.path (scoring a CSV) works with fairdialogue_decision "
                          "and fairdialogue_recommendation")
    rounds = int(p.get("rounds", 4))
    pushbacks = list(p.get("pushbacks") or PUSHBACKS)
    if not 1 <= rounds <= len(pushbacks):
        raise ConfigError(f"probe.rounds must be between 1 and the {len(pushbacks)} pushback "
                          f"turns in probe.pushbacks, got {rounds}")
    dirs = run_dirs((p.get("feedback") or {}).get("items_from"))
    shared = shared_negative_items(dirs, attributes, list(p["tasks"])) if dirs else None
    rows, conversations, model = collect(cfg, p, "decision", attributes, run_dir)
    rows = scoring.parse_rows(rows, "decision", 0)
    metrics = scoring.parse_counts(rows)
    metrics["fairness/feedback/items_from_runs"] = len(dirs)
    if shared is None:
        log.info("feedback items from this target's own answers (probe.feedback.items_from is "
                 "unset)")
    chosen = negative_items(rows, attributes) if shared is None else shared
    every = dry_run.active() is not None   # a dry run sizes the protocol's upper bound
    starts, not_no = starting_points(rows, conversations, chosen, every=every)
    log.info("%d items answered no under every group%s; %d feedback conversations", len(chosen),
             f" by all {len(dirs)} decision runs" if dirs else "", len(starts))
    if sum(not_no.values()):
        log.warning("%d conversations of the chosen items did not start with this target's no; "
                    "left out (fairness/feedback/<attribute>/first_not_no)", sum(not_no.values()))
    with dry_run.scope(method="feedback"):
        traces = run_feedback(model, starts, sampling_of(p, int(cfg.seed)), pushbacks[:rounds],
                              on_round=lambda r, n: log.info("feedback round %d: %d open", r, n))
    model.close()

    done = {t.key: t for t in traces}
    for r in rows:
        t = done.get((r["task"], r["attribute"], r["item"], r["group"]))
        r.update(in_protocol=t is not None, revised_at=None if t is None else t.revised_at,
                 feedback_replies=[] if t is None else t.replies)
    table = persistence_rows(traces, attributes)
    for attribute in attributes:
        metrics[f"fairness/feedback/{attribute}/items"] = len(
            {t.key[:3] for t in traces if t.key[1] == attribute})
        metrics[f"fairness/feedback/{attribute}/first_not_no"] = not_no[attribute]
    for row in table:
        prefix = f"fairness/feedback/{row['attribute']}/{row['group']}"
        metrics.update({f"{prefix}/{m}": row[m] for m in ("rst", "anr", "n", "revised")})

    pd.DataFrame(rows).to_parquet(run_dir / "responses.parquet", index=False)
    write_metrics(metrics, run_dir / "metrics.json")
    write_tables(table, run_dir)
    from benevaudit.probes.fairdialogue import figures

    panels = {a: {row["group"]: (row["revised"], row["n"]) for row in table
                  if row["attribute"] == a} for a in attributes}
    figures.rate_bars(panels, f"FairDialogue negative feedback: revised to yes ({target_name})",
                      "RST (95% Wilson)", run_dir / "rst.png")
    return metrics
