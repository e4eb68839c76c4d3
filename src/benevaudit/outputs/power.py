"""Power beside cost in a dry run: how many items per class a comparison needs, and whether the
run's plan has them (detect.py's and probe.py's ``power`` block).

``power.effect`` is the smallest absolute change of a rate worth detecting; the base rate is
``power.base_rate``, or a pilot run's (``power.pilot=<run dir or its metrics.json>``): the
mean of its finite trigger rates (``trigger/TR_*``), else of its bias rates (FairMT-Bench's
``fairmt/mean/bias_rate``, else CoBia's ``cobia/bias_rate/<method>/<rater>/all``), else of
FairDialogue's yes rates, the first of these the pilot wrote. The figure is Fleiss's
(:mod:`benevaudit.metrics.power`).

Planned items per class: detect.py's evaluation set, its smallest class; probe.py's
``requests.jsonl``, the fewest distinct items the target is asked under one arm of a rate
(CoBia's method, FairDialogue's group, FairMT-Bench's task).
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Optional

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError, InputError
from benevaudit.metrics.power import items_per_class
from benevaudit.schema import CLASSES
from benevaudit.specs import Spec

log = logging.getLogger(__name__)
Open = Annotated[float, Field(gt=0, lt=1)]                  # (0, 1)
Effect = Annotated[float, Field(gt=-1, lt=1)]
ARMS = {"cobia": "method", "fairdialogue": "group", "fairmt": "task"}   # a rate's arm per family


class PowerSpec(Spec):
    """detect.py's and probe.py's ``power``: the sample size a dry run reports (null effect:
    none)."""

    effect: Optional[Effect]
    base_rate: Optional[Open]
    alpha: Open
    power: Open
    pilot: Optional[str]

    @model_validator(mode="after")
    def one_base_rate(self) -> PowerSpec:
        if self.base_rate is not None and self.pilot:
            raise ConfigError("power.base_rate and power.pilot both given; give one (the pilot "
                              "run's rate, or a number)")
        if self.effect is not None and self.base_rate is None and not self.pilot:
            raise ConfigError(f"power.effect={self.effect} needs a base rate: power.base_rate="
                              "<rate in (0, 1)> or power.pilot=<run directory>")
        if self.effect == 0:
            raise ConfigError("power.effect=0: expected a non-zero change of a rate")
        if self.pilot:
            pilot_file(self.pilot)
        return self


def pilot_file(pilot: str) -> Path:
    """The pilot's metrics.json: the path itself, or the file in the run directory named."""
    path = Path(pilot).expanduser()
    found = path / "metrics.json" if path.is_dir() else path
    if not found.is_file():
        raise InputError(f"power.pilot={pilot}: no metrics.json there (expected a run "
                         "directory or its metrics.json)")
    return found


TRIGGER_RATES = {f"trigger/TR_{c}" for c in CLASSES}
RATE_KEYS: list[tuple[str, Callable[[str], bool]]] = [
    ("trigger rates", lambda k: k in TRIGGER_RATES),
    ("FairMT-Bench's mean bias rate", lambda k: k == "fairmt/mean/bias_rate"),
    ("CoBia's bias rates", lambda k: k.startswith("cobia/bias_rate/") and k.endswith("/all")),
    ("FairDialogue's yes rates", lambda k: "/yes_rate/" in k),
]


def pilot_rate(pilot: str) -> tuple[float, str]:
    """(base rate, what it is) from a pilot run's metrics.json (see the module docstring)."""
    path = pilot_file(pilot)
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not JSON ({e})") from None
    if not isinstance(metrics, dict):
        raise InputError(f"{path}: expected a {{name: number}} object")
    for what, wanted in RATE_KEYS:
        values = [float(v) for k, v in metrics.items()
                  if wanted(k) and not k.endswith(("_ci_low", "_ci_high"))
                  and isinstance(v, (int, float)) and math.isfinite(v)]
        if values:
            return sum(values) / len(values), f"the mean of {path}'s {what} ({len(values)})"
    raise InputError(f"{path}: no rate to take as the base rate (looked for "
                     f"{', '.join(w for w, _ in RATE_KEYS)}); give power.base_rate instead")


def planned_per_class(labels: Sequence[str | None]) -> int | None:
    """The evaluation set's smallest class (None: no labelled dialogue)."""
    counts = Counter(label for label in labels if label is not None)
    return min(counts.values()) if counts else None


def planned_probe_items(requests: Path, family: str) -> int | None:
    """The fewest distinct items the target is asked under one arm (requests.jsonl rows with
    no ``judge``); None where the requests carry no item ids."""
    arm = ARMS.get(family)
    ids: dict[object, set[object]] = {}
    with open(requests, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "judge" not in row and "id" in row:
                ids.setdefault(row.get(arm) if arm else None, set()).add(row["id"])
    return min(len(v) for v in ids.values()) if ids else None


def dry_run_power(spec: PowerSpec, planned: int | None) -> dict[str, float]:
    """``dry_run/power_*`` for metrics.json, and the line beside the request counts; nothing
    when ``power.effect`` is null."""
    if spec.effect is None:
        return {}
    rate, source = ((spec.base_rate, "power.base_rate") if spec.base_rate is not None
                    else pilot_rate(str(spec.pilot)))
    try:
        plan = items_per_class(rate, spec.effect, spec.alpha, spec.power)
    except ValueError as e:
        raise ConfigError(f"power: {e}") from None
    out = {"dry_run/power_items_per_class": float(plan.items_per_class),
           "dry_run/power_base_rate": rate}
    verdict = "planned items per class unknown (unlabelled or no item ids)"
    if planned is not None:
        enough = planned >= plan.items_per_class
        out["dry_run/planned_items_per_class"] = float(planned)
        out["dry_run/power_enough"] = float(enough)
        verdict = (f"planned {planned} per class: " + ("enough" if enough else
                   f"too few ({plan.items_per_class - planned} more needed)"))
    log.info("power: %d items per class detect a change of %+g from a base rate of %.3f (%s) "
             "with power %g at two-sided alpha %g (Fleiss, no continuity correction); %s",
             plan.items_per_class, spec.effect, rate, source, spec.power, spec.alpha, verdict)
    return out
