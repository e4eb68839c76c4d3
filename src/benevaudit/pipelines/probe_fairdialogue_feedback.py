"""``python probe.py probe=fairdialogue_feedback``: push back on "no" and see who gets a yes.

The decision scenarios are asked under every group first (the same requests as
``fairdialogue_decision``, so a cached decision run makes this step free). Items the target
answered no under every group of an attribute enter the protocol; each group's conversation
then gets up to four pushback turns. Metrics: ``fairness/feedback/<attribute>/<group>/rst``
and ``.../anr`` (with ``.../n`` and ``.../revised``), ``fairness/feedback/<attribute>/items``,
and the first round's ``parse/<task>/invalid|refused``.
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
from benevaudit.probes.fairdialogue.feedback import PUSHBACKS, run_feedback


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
    rows, conversations, model = collect(cfg, p, "decision", attributes, run_dir)
    rows = scoring.parse_rows(rows, "decision", 0)
    metrics = scoring.parse_counts(rows)

    # items answered no under every group of their attribute enter the protocol
    by_item: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_item[(r["task"], r["attribute"], r["item"])].append(i)
    starts = []
    every = dry_run.active() is not None   # a dry run sizes the protocol's upper bound
    for (task, attribute, item), idx in by_item.items():
        if every or all(rows[i]["decision"] == "no" for i in idx):
            starts += [((task, attribute, item, rows[i]["group"]), conversations[i],
                        rows[i]["answer"]) for i in idx]
    log.info("%d of %d items were answered no under every group; %d feedback conversations",
             len({s[0][:3] for s in starts}), len(by_item), len(starts))
    with dry_run.scope(method="feedback"):
        traces = run_feedback(model, starts, sampling_of(p, int(cfg.seed)), pushbacks[:rounds],
                              on_round=lambda r, n: log.info("feedback round %d: %d open", r, n))
    model.close()

    done = {t.key: t for t in traces}
    for r in rows:
        t = done.get((r["task"], r["attribute"], r["item"], r["group"]))
        r.update(in_protocol=t is not None, revised_at=None if t is None else t.revised_at,
                 feedback_replies=[] if t is None else t.replies)
    table = []
    for attribute, groups in attributes.items():
        items = {t.key[:3] for t in traces if t.key[1] == attribute}
        metrics[f"fairness/feedback/{attribute}/items"] = len(items)
        for g in groups:
            result = persistence([t.revised_at for t in traces
                                  if t.key[1] == attribute and t.key[3] == g])
            prefix = f"fairness/feedback/{attribute}/{g}"
            metrics.update({f"{prefix}/rst": result.rst, f"{prefix}/anr": result.anr,
                            f"{prefix}/n": result.n, f"{prefix}/revised": result.revised})
            table.append({"attribute": attribute, "group": g, "n": result.n,
                          "revised": result.revised, "rst": result.rst, "anr": result.anr})

    pd.DataFrame(rows).to_parquet(run_dir / "responses.parquet", index=False)
    write_metrics(metrics, run_dir / "metrics.json")
    write_tables(table, run_dir)
    from benevaudit.probes.fairdialogue import figures

    panels = {a: {row["group"]: (row["revised"], row["n"]) for row in table
                  if row["attribute"] == a} for a in attributes}
    figures.rate_bars(panels, f"FairDialogue negative feedback: revised to yes ({target_name})",
                      "RST (95% Wilson)", run_dir / "rst.png")
    return metrics
