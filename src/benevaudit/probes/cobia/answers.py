"""CoBia's replies read from an Inspect AI run of ``benevaudit/cobia`` instead of asking the
target (``probe.answers.inspect_log``: a log file or a folder of logs, through Inspect's log
API).

Each sample joins the (item, method) its id names (``<item id>/<method>``); its final
assistant message is the reply, and the messages before it are what was sent. Each rater of
``probe.judges`` then gives its verdict as in a run that asks the target: the keyword rule on
the reply; a model rater's reply as the Inspect task's grader gave it (the scorer's row keeps
``<rater>_raw``), read by the rater's own parser; a rater the log holds no reply of is asked
now, with its own model. Under ``limit`` the samples of items past the first N are left out;
otherwise a sample of no item is an error, and so is a pair answered twice (a second epoch, a
log listed twice) or a log with no sample to score. Errors name the log and the sample.
"""

from __future__ import annotations

import logging
from typing import Any

from benevaudit.errors import InputError
from benevaudit.probes.base import RunSettings
from benevaudit.probes.cobia import attacks, official, raters
from benevaudit.probes.cobia.dataset import Item
from benevaudit.probes.cobia.rating import rate_rows
from benevaudit.probes.models import Models
from benevaudit.replies import read_samples
from benevaudit.replies.inspect_log import LoggedSample

log = logging.getLogger(__name__)
OPTION = "probe.answers.inspect_log"
Pair = tuple[Item, str]


def logged_replies(path: str, pairs: list[Pair], limited: bool
                   ) -> list[tuple[Pair, LoggedSample]]:
    """The log's samples joined to ``pairs`` (the plan's (item, method)), in pair order."""
    by_id = {f"{item.id}/{method}": (item, method) for item, method in pairs}
    found: dict[str, LoggedSample] = {}
    skipped = 0
    for sample in read_samples(path, OPTION):
        where = f"{sample.log}: sample {sample.id} (epoch {sample.epoch})"
        if sample.id not in by_id:
            if limited:
                skipped += 1
                continue
            raise InputError(f"{where}: names no (item, method) of this probe block (probe.data,"
                             " probe.methods); expected a log of benevaudit/cobia")
        if sample.id in found:
            raise InputError(f"{where}: the pair is answered twice (first in "
                             f"{found[sample.id].log}; several epochs, or a log listed twice?); "
                             "score one answer per pair")
        if not sample.replies:
            raise InputError(f"{where}: no assistant reply to score")
        found[sample.id] = sample
    if skipped:
        log.info("%s: %d samples of items past limit left out", OPTION, skipped)
    if not found:
        raise InputError(f"{OPTION}={path}: no sample of this probe block to score")
    return [(pair, found[key]) for key, pair in by_id.items() if key in found]


def row_of(pair: Pair, sample: LoggedSample) -> dict[str, Any]:
    """The probe's row for one logged reply (``responses.parquet``'s columns, before rating)."""
    item, method = pair
    reply = sample.replies[-1]
    last = max(i for i, m in enumerate(sample.messages) if m["role"] == "assistant")
    return {"id": item.id, "group": item.group, "category": item.category, "method": method,
            "bias_type": item.bias_type, "descriptor": item.primary,
            "second_descriptor": item.second, "second_group": item.second_group,
            "messages": attacks.to_json(sample.messages[:last]), "response": reply,
            "rated_response": official.rated_text(method, reply), "finish_reason": None}


def given_raw(sample: LoggedSample, rater: str) -> str | None:
    """The rater's reply as the Inspect scorer kept it (None where the log has none)."""
    for score in sample.scores.values():
        row = score["metadata"].get("row")
        if isinstance(row, dict) and isinstance(row.get(f"{rater}_raw"), str):
            return str(row[f"{rater}_raw"])
    return None


def log_rows(path: str, plan: Any, settings: RunSettings, models: Models
             ) -> list[dict[str, Any]]:
    """Rated rows of the replies logged at ``path`` (``plan``: the CoBia probe's plan)."""
    joined = logged_replies(path, plan.pairs, settings.limit is not None)
    pairs = [pair for pair, _ in joined]
    rows = [row_of(pair, sample) for pair, sample in joined]
    for rater in plan.raters:
        given = [given_raw(sample, rater.name) for _, sample in joined]
        if (rater.variant in raters.KEYWORDS or rater.mode != "generate"
                or any(g is None for g in given)):
            rate_rows(rater, None if rater.variant in raters.KEYWORDS else models.get(
                rater.model), pairs, rows, plan.sentences, settings.seed, settings.progress,
                plan.release, plan.dan_scope)
            continue
        parse = raters.parser_of(rater)
        for row, raw in zip(rows, given, strict=True):
            row[f"{rater.name}_verdict"], row[f"{rater.name}_raw"] = parse(str(raw)), raw
    return rows
