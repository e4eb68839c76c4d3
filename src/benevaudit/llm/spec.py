"""What a run that calls models declares: its ``llm`` blocks, sampling, the request cache, and
``dry_run``.

:class:`LLMSpec` is one ``llm`` block (``conf/llm/*.yaml``, a detector's, a judge's, the probe
target's); keys a backend alone takes pass through. :class:`ModelRun` holds the top-level keys
that ``detect``, ``probe`` and ``generate`` share, and the entrypoint's own spec extends it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple, Optional, Union

from pydantic import Field, model_validator

from benevaudit.llm.backend_specs import LLMSpec, llm_spec
from benevaudit.llm.base import Sampling
from benevaudit.llm.cache_files import check_sqlite
from benevaudit.llm.dry_run import RequestLog, recording
from benevaudit.specs import NonNegative, NonNegativeInt, PositiveInt, Share, RunSpec, Spec

__all__ = ["LLMSpec", "llm_spec", "SamplingSpec", "DryRun", "DryRunBlock", "ModelRun"]
log = logging.getLogger(__name__)
REQUESTS = "requests.jsonl"
DRY_RUN = ("true, false, or dry_run.enabled=<bool> with dry_run.tokenizer=<dir | embedded | "
           "none | auto>")


class SamplingSpec(Spec):
    """A ``sampling`` block (:class:`benevaudit.llm.Sampling`'s fields)."""

    temperature: NonNegative
    top_p: Share                          # (0, 1]
    max_tokens: PositiveInt
    seed: NonNegativeInt                  # each request's seed base

    def sampling(self) -> Sampling:
        """The runtime :class:`~benevaudit.llm.Sampling` of the block: the one conversion."""
        return Sampling(temperature=self.temperature, top_p=self.top_p,
                        max_tokens=self.max_tokens, seed=self.seed)


class DryRunBlock(Spec):
    enabled: bool
    tokenizer: Optional[str] = None       # absent: auto


class DryRun(NamedTuple):
    """``dry_run=true``: detect.py, probe.py and generate.py build every request and send none.

    Each family records its own (``detectors/dry_run.py``, ``probes/dry_run.py``,
    ``generation/dry_run.py``) against the recording models of ``llm/dry_run.py``, into the run
    directory's ``requests.jsonl``. ``tokenizer`` counts prompt tokens (None: each model's own,
    where it is available offline); inputs are checked as in a real run and no weights load.
    """

    tokenizer: str | None

    def record(self, out: Path, what: str, record: Callable[[RequestLog], Any]
               ) -> dict[str, float]:
        """``record(request_log)`` with every model recording into ``out/requests.jsonl``;
        the metrics of ``metrics.json`` (``dry_run/requests``, ``dry_run/dependent_requests``
        and, where every prompt was tokenized, ``dry_run/prompt_tokens`` and
        ``dry_run/prefix_floor_tokens``: what exact prefix caching would still compute)."""
        request_log = RequestLog(out / REQUESTS, self.tokenizer)
        with recording(request_log):
            record(request_log)
        metrics = request_log.metrics()
        log.info("dry run of %s: %d requests (%d depend on an earlier reply)%s; written to %s",
                 what, request_log.requests, request_log.dependent,
                 f", {metrics['dry_run/prompt_tokens']:,.0f} prompt tokens, prefix floor "
                 f"{metrics['dry_run/prefix_floor_tokens']:,.0f}"
                 f"{' (estimate)' if metrics['dry_run/tokens_estimated'] else ''}"
                 if "dry_run/prompt_tokens" in metrics else "", out / REQUESTS)
        return metrics


class ModelRun(RunSpec):
    """The top-level keys of a run that calls models: ``seed``, ``progress``, ``llm_cache``
    (a SQLite request cache, null: none) and ``dry_run`` (``true``, ``false`` or a block)."""

    seed: NonNegativeInt
    progress: bool
    llm_cache: Optional[str]
    dry_run: Annotated[Union[bool, DryRunBlock], Field(description=DRY_RUN)]

    @model_validator(mode="after")
    def cache_readable(self) -> ModelRun:
        if self.llm_cache:
            check_sqlite(self.llm_cache, "llm_cache")
        return self

    def dry(self) -> DryRun | None:
        """The dry run's settings, or None for a real run. ``dry_run.tokenizer=<x>`` alone
        turns it on."""
        node = self.dry_run
        if isinstance(node, bool):
            return DryRun(None) if node else None
        if node.enabled or node.tokenizer not in (None, "auto"):
            return DryRun(node.tokenizer)
        return None
