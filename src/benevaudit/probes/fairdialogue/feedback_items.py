"""Which decision items Table 3 pushes back on: those answered no under every group.

The study takes the items that *every model* answered no. Each target runs apart, so the
feedback probe reads the ``probe=fairdialogue_decision`` run directories listed in
``probe.feedback.items_from`` and keeps an item when every listed run answered no under every
group of its attribute. Items are chosen per mode: a feedback run reads only the listed runs of
its own ``probe.mode`` (their saved ``.hydra/config.yaml``; text where there is none), so audio
and text runs of one sweep are never pooled. A listed directory that is not such a run is one
``error:`` line naming it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError
from benevaudit.files import read_parquet, read_yaml

log = logging.getLogger(__name__)
DECISION_COLUMNS = ("task", "attribute", "item", "group", "decision")

Item = tuple[str, str, str]          # (task, attribute, item)


def negative_items(answers: Iterable[Mapping[str, Any]],
                   attributes: Mapping[str, Sequence[str]]) -> set[Item]:
    """The (task, attribute, item) whose every group of ``attributes[attribute]`` was answered,
    and answered no each time (``decision == "no"``), in one model's parsed decision rows."""
    seen: dict[Item, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for r in answers:
        if r["attribute"] in attributes:
            seen[(str(r["task"]), str(r["attribute"]), str(r["item"]))][str(r["group"])].append(
                r["decision"])
    return {key for key, by_group in seen.items()
            if all(by_group.get(g) and all(d == "no" for d in by_group[g])
                   for g in attributes[key[1]])}


def run_dirs(value: Sequence[str] | None) -> list[Path]:
    """``probe.feedback.items_from`` as a list of paths."""
    return [Path(v) for v in value or []]


def run_mode(run_dir: Path) -> str:
    """A decision run's ``probe.mode`` from its saved config; text where it has none (a run
    from before audio mode, or a directory holding only ``responses.parquet``)."""
    saved = run_dir / ".hydra" / "config.yaml"
    config = read_yaml(saved, expected="a run's saved Hydra config") if saved.is_file() else {}
    probe = (config or {}).get("probe") or {}
    return str(probe.get("mode") or "text") if isinstance(probe, dict) else "text"


def same_mode(dirs: list[Path], mode: str) -> list[Path]:
    """The listed decision runs of ``mode``; a ConfigError when none is (items are chosen per
    mode, never pooled across audio and text runs)."""
    # a missing directory stays, to be named by shared_negative_items
    kept = [d for d in dirs if not d.is_dir() or run_mode(d) == mode]
    if not kept:
        raise ConfigError(f"probe.feedback.items_from: none of the {len(dirs)} listed runs ran "
                          f"in probe.mode={mode}; list the decision runs of this mode (items "
                          "are chosen per mode)")
    if len(kept) < len(dirs):
        log.info("feedback items from the %d of %d listed decision runs in %s mode",
                 len(kept), len(dirs), mode)
    return kept


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
        table = read_parquet(file, None, "the responses.parquet of a probe=fairdialogue_decision "
                             "run (probe.feedback.items_from)", DECISION_COLUMNS)
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
