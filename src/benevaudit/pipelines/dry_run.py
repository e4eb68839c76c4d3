"""``dry_run=true``: detect.py, probe.py and generate.py build every request and send none.

Each family records its own requests (``detectors/dry_run.py``, ``probes/dry_run.py``,
``generation/dry_run.py``) against the recording models of ``llm/dry_run.py``. The run directory
gets ``requests.jsonl`` (one request a line) and ``metrics.json`` with ``dry_run/requests``,
``dry_run/dependent_requests`` and, where every prompt could be tokenized,
``dry_run/prompt_tokens`` and ``dry_run/prefix_floor_tokens`` (what exact prefix caching would
still compute). Inputs are checked as in a real run; no weights load.

``dry_run`` is ``false``, ``true``, or a block ``{enabled, tokenizer}``: ``dry_run.tokenizer=<dir
| embedded | none>`` alone also turns it on (``llm.spec.ModelRun.dry``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benevaudit.llm.dry_run import RequestLog, recording
from benevaudit.llm.spec import DryRun
from benevaudit.pipelines.config import write_metrics

log = logging.getLogger(__name__)
REQUESTS = "requests.jsonl"


def dry_run(out: Path, dry: DryRun, what: str, record: Callable[[RequestLog], Any]
            ) -> dict[str, float]:
    """``record(request_log)`` with every model recording into ``out/requests.jsonl``; then
    ``metrics.json`` with the counts, and one log line about ``what`` was dry-run."""
    request_log = RequestLog(out / REQUESTS, dry.tokenizer)
    with recording(request_log):
        record(request_log)
    metrics = request_log.metrics()
    write_metrics(metrics, out / "metrics.json")
    log.info("dry run of %s: %d requests (%d depend on an earlier reply)%s; written to %s",
             what, request_log.requests, request_log.dependent,
             f", {metrics['dry_run/prompt_tokens']:,.0f} prompt tokens, prefix floor "
             f"{metrics['dry_run/prefix_floor_tokens']:,.0f}"
             f"{' (estimate)' if metrics['dry_run/tokens_estimated'] else ''}"
             if "dry_run/prompt_tokens" in metrics else "", out / REQUESTS)
    return metrics
