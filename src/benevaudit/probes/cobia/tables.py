"""The paper's score-table layout and a bar chart, from a run's metrics.

One table per category: a row per method (UCC included), a column per rater, each cell the
bias rate with its 95% Wilson interval. ``table.csv`` holds the same cells in long form, the
rater's name in its ``judge`` column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benevaudit.plotting import plt, png
from benevaudit.probes.cobia.dataset import CATEGORIES

METHOD_ORDER = ("hcc", "scc", "ucc", "zero_shot", "roleplay", "dan")
RATE = re.compile(r"^cobia/(?:bias_rate/(?P<method>[^/]+)|(?P<ucc>ucc))/(?P<rater>[^/]+)/"
                  r"(?P<category>[^/]+)$")


def cells(metrics: dict[str, float]) -> list[dict[str, object]]:
    """Long-form rows (method, judge: the rater, category, rate, ci_low, ci_high, and the
    rate corrected for the rater's error where judge validation gave one) in report order."""
    rows = []
    for name, value in metrics.items():
        m = RATE.match(name)
        if not m or name.endswith(("_ci_low", "_ci_high", "_corrected")):
            continue
        rows.append({"method": "ucc" if m["ucc"] else m["method"], "judge": m["rater"],
                     "category": m["category"], "rate": value,
                     "ci_low": metrics.get(f"{name}_ci_low"),
                     "ci_high": metrics.get(f"{name}_ci_high"),
                     "corrected": metrics.get(f"{name}_corrected"),
                     "corrected_ci_low": metrics.get(f"{name}_corrected_ci_low"),
                     "corrected_ci_high": metrics.get(f"{name}_corrected_ci_high")})
    return sorted(rows, key=lambda r: (_category_key(str(r["category"])),
                                       method_key(str(r["method"])), str(r["judge"])))


def method_key(method: str) -> tuple[int, str]:
    """Report order of the methods (UCC after HCC and SCC); an unknown one last."""
    return (METHOD_ORDER.index(method) if method in METHOD_ORDER else 99, method)


def _category_key(category: str) -> tuple[int, str]:
    order = (*CATEGORIES, "all")
    return (order.index(category) if category in order else 98, category)


def fmt(rate: object, low: object, high: object) -> str:
    if rate is None or (isinstance(rate, float) and math.isnan(rate)):
        return "–"
    return f"{rate:.2f} [{low:.2f}, {high:.2f}]"


def cell(row: dict[str, object]) -> str:
    """The rate and its interval; then, where judge validation corrected it, the corrected
    rate and its interval after an arrow."""
    raw = fmt(row["rate"], row["ci_low"], row["ci_high"])
    if row.get("corrected") is None:
        return raw
    return f"{raw} → {fmt(row['corrected'], row['corrected_ci_low'], row['corrected_ci_high'])}"


def markdown(rows: Sequence[dict[str, object]], target: str) -> str:
    """Per category, methods × raters; ``target`` heads the file (one run, one model)."""
    out = [f"# CoBia bias rates, target `{target}`", "",
           "Fraction of valid verdicts judged biased, [95% Wilson interval]; "
           "UCC = biased under HCC or SCC; → the rate corrected for the rater's error "
           "measured on labelled items [95% bootstrap interval], where judge validation ran.",
           ""]
    for category in dict.fromkeys(str(r["category"]) for r in rows):
        part = [r for r in rows if r["category"] == category]
        raters = sorted({str(r["judge"]) for r in part})
        out += [f"## {category}", "", "| method | " + " | ".join(raters) + " |",
                "|---|" + "---|" * len(raters)]
        for method in dict.fromkeys(str(r["method"]) for r in part):
            found = {str(r["judge"]): r for r in part if r["method"] == method}
            cols = [cell(found[j]) if j in found else "" for j in raters]
            name = method.upper() if len(method) == 3 else method
            out.append(f"| {name} | " + " | ".join(cols) + " |")
        out.append("")
    return "\n".join(out)


def bar_chart(rows: Sequence[dict[str, object]], target: str) -> bytes:
    """Bias rate per category, a bar per method, one panel per rater, Wilson error bars."""
    raters = sorted({str(r["judge"]) for r in rows}) or ["(none)"]
    categories = list(dict.fromkeys(str(r["category"]) for r in rows))
    methods = list(dict.fromkeys(str(r["method"]) for r in sorted(
        rows, key=lambda r: method_key(str(r["method"])))))
    fig, axes = plt.subplots(len(raters), 1, figsize=(max(6, 1.3 * len(categories) + 2),
                                                      2.6 * len(raters)), squeeze=False)
    width = 0.8 / max(1, len(methods))
    for ax, rater in zip(axes[:, 0], raters):
        for k, method in enumerate(methods):
            vals = {str(r["category"]): r for r in rows
                    if r["judge"] == rater and r["method"] == method}
            rate = np.array([_num(vals.get(c, {}).get("rate")) for c in categories])
            low = np.array([_num(vals.get(c, {}).get("ci_low")) for c in categories])
            high = np.array([_num(vals.get(c, {}).get("ci_high")) for c in categories])
            x = np.arange(len(categories)) + (k - (len(methods) - 1) / 2) * width
            err = np.nan_to_num(np.vstack([rate - low, high - rate]))
            ax.bar(x, np.nan_to_num(rate), width, yerr=err, capsize=2,
                   label=method.upper() if len(method) == 3 else method)
            for xi in x[np.isnan(rate)]:   # no valid verdict: say so rather than draw a 0
                ax.text(xi, 0.02, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
        ax.set_xticks(range(len(categories)), categories, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel(f"{rater}\nbias rate")
    axes[0, 0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"CoBia bias rate by category — target {target} (95% Wilson)")
    fig.tight_layout()
    return png(fig, dpi=120)


def _num(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else float("nan")
