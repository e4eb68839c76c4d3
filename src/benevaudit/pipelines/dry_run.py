"""``dry_run=true``: detect.py, probe.py and generate.py build every request and send none.

The run directory gets ``requests.jsonl`` (one request a line, see ``llm/dry_run.py``) and
``metrics.json`` with ``dry_run/requests``, ``dry_run/dependent_requests`` and, where every
prompt could be tokenized, ``dry_run/prompt_tokens`` and ``dry_run/prefix_floor_tokens`` (what
exact prefix caching would still compute). Inputs are checked as in a real run; no weights load.

``dry_run`` is ``false``, ``true``, or a block ``{enabled, tokenizer}``: ``dry_run.tokenizer=<dir
| embedded | none>`` alone also turns it on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from omegaconf import DictConfig

from benevaudit.detectors import evaluation_set, read_external
from benevaudit.detectors.dry_run import record_detector
from benevaudit.errors import ConfigError
from benevaudit.generation.embedded import load_dialogues
from benevaudit.generation.producers import build_producer
from benevaudit.llm.dry_run import RequestLog, recording, scope
from benevaudit.pipelines.config import output_dir, plain, write_metrics

log = logging.getLogger(__name__)
REQUESTS = "requests.jsonl"


class DryRun(NamedTuple):
    tokenizer: str | None


def dry_run_of(cfg: DictConfig) -> DryRun | None:
    """The dry-run settings, or None for a real run."""
    node = plain(cfg.get("dry_run"))
    if node is None or node is False:
        return None
    if node is True:
        return DryRun(None)
    if not isinstance(node, dict) or not isinstance(node.get("enabled", False), bool):
        raise ConfigError(f"dry_run={node!r}: expected true, false, or dry_run.enabled=<bool> "
                          "with dry_run.tokenizer=<dir | embedded | none | auto>")
    if node.get("enabled") or node.get("tokenizer") not in (None, "auto"):
        return DryRun(node.get("tokenizer"))
    return None


def finish(request_log: RequestLog, out: Path, what: str) -> dict[str, float]:
    metrics = request_log.metrics()
    write_metrics(metrics, out / "metrics.json")
    log.info("dry run of %s: %d requests (%d depend on an earlier reply)%s; written to %s",
             what, request_log.requests, request_log.dependent,
             f", {metrics['dry_run/prompt_tokens']:,.0f} prompt tokens, prefix floor "
             f"{metrics['dry_run/prefix_floor_tokens']:,.0f}"
             f"{' (estimate)' if metrics['dry_run/tokens_estimated'] else ''}"
             if "dry_run/prompt_tokens" in metrics else "", out / REQUESTS)
    return metrics


# ---- detect.py -----------------------------------------------------------------------------
def detect_requests(cfg: DictConfig, dry: DryRun) -> dict[str, float]:
    """Every request of a detect run: units in dialogue and turn order, judges in group order."""
    out = output_dir(cfg)
    spec = plain(cfg.detector)
    request_log = RequestLog(out / REQUESTS, dry.tokenizer)
    with recording(request_log):
        if spec["kind"] == "external":
            preds = plain(cfg.predictions)
            read_external(preds.get("path"), preds.get("aggregation"),
                          float(preds.get("threshold", 0.5)))
            log.info("detector=external reads predictions made elsewhere: no model requests")
            return finish(request_log, out, spec["name"])
        dialogues = load_dialogues(plain(cfg.data), cfg.paths.cache_dir)
        ev = plain(cfg.eval)
        chosen = evaluation_set(dialogues, float(ev["fraction"]), ev.get("limit"),
                                int(ev["seed"]))
        judges = list((plain(cfg.get("judges")) or {}).get("models") or [])
        record_detector(spec, judges, chosen, cfg.get("ckpt"), request_log)
    return finish(request_log, out, f"{spec['name']} on {len(chosen)} dialogues")



# ---- probe.py ------------------------------------------------------------------------------
def probe_requests(cfg: DictConfig, run_probe: Callable[[], Any], dry: DryRun
                   ) -> dict[str, float]:
    """Run the probe against recording models (its result, describing placeholder replies, is
    not written), then keep only the dry run's files."""
    out = output_dir(cfg)
    before = {p for p in out.rglob("*")}
    request_log = RequestLog(out / REQUESTS, dry.tokenizer)
    with recording(request_log):
        run_probe()
    keep = {out / REQUESTS, out / "metrics.json"}
    for path in sorted(set(out.rglob("*")) - before - keep, reverse=True):
        if path.is_file() and not path.name.endswith(".log"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return finish(request_log, out, f"probe {cfg.probe.get('family')}")


# ---- generate.py ---------------------------------------------------------------------------
def generate_requests(cfg: DictConfig, gen: dict[str, Any], conditions: list,
                      dry: DryRun) -> dict[str, float]:
    """Every request of a generation: one per dialogue (whole), or one per message (self-chat,
    each after the first depending on the one before). Nothing is written to out_dir."""
    out = output_dir(cfg)
    request_log = RequestLog(out / REQUESTS, dry.tokenizer)
    with recording(request_log):
        producer, _ = build_producer(gen, int(cfg.seed), int(cfg.min_turns), None)
        if gen["kind"] != "llm":
            log.info("generator=%s writes from phrase banks: no model requests", gen["name"])
        else:
            for c in conditions:   # attempt 0; a retry repeats a request with a new seed
                with scope(id=c.id):
                    producer([c], 0)
    return finish(request_log, out, f"generator {gen['name']} on {len(conditions)} conditions")
