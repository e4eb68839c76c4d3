"""What a paired comparison leaves in the report's run directory: the text of ``paired.csv``
(one row per metric) and ``paired_flips.csv`` (the items whose verdict changed, ids and labels
only), the "Paired comparison" section, and the gate's lines for CI.

The gate (``gate=true``) names each metric whose change is significant after Holm's
adjustment; ``gate.metrics`` narrows the metrics it looks at and ``gate.direction=worse``
keeps only changes for the worse (:func:`benevaudit.report.paired.worse`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from benevaudit.errors import ConfigError
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.paired import Comparison

KEY, TITLE = "paired", "Paired comparison"
DIRECTIONS = ("any", "worse")
TABLE, FLIPS = "paired.csv", "paired_flips.csv"


def paired_texts(comparison: Comparison) -> dict[str, str]:
    """The CSV text of ``paired.csv`` and ``paired_flips.csv``, by file name."""
    return {TABLE: comparison.table.to_csv(index=False),
            FLIPS: comparison.flips.to_csv(index=False)}


def _number(value: float, digits: int = 3) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.3g}"


def _direction(difference: float, worse: bool, metric: str) -> str:
    if not math.isfinite(difference):
        return "n/a"
    if difference and "/yes_rate/" in metric:      # neither way is better
        return "changed"
    return "same" if difference == 0 else "worse" if worse else "better"


def section(comparison: Comparison, names: tuple[str, str], alpha: float) -> SectionOutput:
    """The report section: the per-metric table and the flips per verdict (and class)."""
    rows = [[r.metric, _number(r.a), _number(r.b), f"{r.difference:+.3f}"
             if math.isfinite(r.difference) else "n/a", str(r.n_items), str(r.discordant), r.test,
             _p(r.p_value), _p(r.p_holm), "yes" if r.significant else "no",
             _direction(r.difference, r.worse, r.metric)]
            for r in comparison.table.itertuples()]
    metrics = Table(f"A = {names[0]}, B = {names[1]}",
                    ["Metric", "A", "B", "B − A", "Items", "Changed", "Test", "p", "Holm p",
                     f"Holm p < {alpha:g}", "B vs A"], rows,
                    "Over the items valid in both runs. Changed: items whose verdict differs.")
    intro = (f"Run A ({names[0]}) against run B ({names[1]}), item by item "
             f"({comparison.kind} runs). McNemar's exact test for each rate, the exact "
             "sign-flip test for Δ(OB−BB), a paired permutation test for macro-F1 and for "
             "GUS and SNSR (items swapped whole); p-values "
             f"adjusted by Holm across the {len(comparison.table)} metrics. Items only in A: "
             f"{comparison.only_a}; only in B: {comparison.only_b} (left out). The items whose "
             "verdict changed are listed in paired_flips.csv (ids and labels, no text).")
    return SectionOutput(KEY, TITLE, intro, [metrics, _flip_table(comparison.flips)])


def _shown(value: object, verdict: str) -> str:
    if verdict == "pred":
        return str(value)
    if verdict == "decision":
        return "yes" if value == 1 else "no"
    return "flagged" if value == 1 else "not flagged"


def _flip_table(flips: pd.DataFrame) -> Table:
    """Flips per verdict (and label where the runs have one), with their transitions A→B."""
    by = ["verdict", *(["label"] if "label" in flips.columns else [])]
    rows = []
    for key, part in (flips.groupby(by, dropna=False, sort=True) if len(flips) else ()):
        key = key if isinstance(key, tuple) else (key,)
        moves = part.groupby(["a", "b"], sort=True).size().sort_values(ascending=False,
                                                                       kind="stable")
        text = " · ".join(f"{_shown(a, key[0])} → {_shown(b, key[0])}: {n}"
                          for (a, b), n in moves.items())
        rows.append([*("—" if pd.isna(k) else str(k) for k in key), str(len(part)), text])
    return Table("Verdicts that changed", [*(b.capitalize() for b in by), "Items", "A → B"],
                 rows, "Per item in paired_flips.csv (ids and labels, no text).")


def gate_lines(comparison: Comparison, metrics: Sequence[str] | None, direction: str | None,
               alpha: float) -> list[str]:
    """One line per metric whose change is significant (Holm p < ``alpha``), among ``metrics``
    (None: all), only changes for the worse when ``direction`` is ``worse`` (None: any)."""
    direction = direction or "any"
    if direction not in DIRECTIONS:
        raise ConfigError(f"gate.direction={direction!r}: expected one of {list(DIRECTIONS)}")
    table = comparison.table
    known = list(table["metric"])
    unknown = [m for m in metrics or () if m not in known]
    if unknown:
        raise ConfigError(f"gate.metrics: {unknown} not compared here; valid: {known}")
    lines = []
    for r in table.itertuples():
        if metrics and r.metric not in metrics:
            continue
        if r.significant and (direction == "any" or r.worse):
            lines.append(f"gate: {r.metric} {'worse' if r.worse else 'changed'}: "
                         f"{_number(r.a)} → {_number(r.b)} ({r.difference:+.3f}), "
                         f"Holm-adjusted p = {_p(r.p_holm)} < {alpha:g}")
    return lines
