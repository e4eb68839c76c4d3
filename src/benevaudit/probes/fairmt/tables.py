"""FairMT's run table (per task, its mean, per type and dimension, with intervals) and the
bias-rate-by-turn figure: the paper's claim that bias grows over the turns, seen per task."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from benevaudit.plotting import plt, png
from benevaudit.probes.fairmt.release import TASKS, TURNS

STAND_IN_NOTE = ("> **Stand-in data**: invented groups and harmless traits written by "
                 "benevaudit, not the FairMT-Bench release; these rates say nothing about the "
                 "target's biases.")
TURN = re.compile(r"^fairmt/(?P<task>[^/]+)/turn_(?P<turn>\d+)/bias_rate$")


def rows_of(metrics: Mapping[str, float], target: str) -> list[dict[str, object]]:
    """One row per scope (each task, the mean, each type, each dimension) that has a rate."""
    scopes = [(t, f"fairmt/{t}") for t in TASKS] + [("mean over tasks", "fairmt/mean")]
    scopes += [(f"{kind} {m.split('/')[2]}", m.rsplit("/", 1)[0]) for m in sorted(metrics)
               for kind in ("type", "dimension")
               if m.startswith(f"fairmt/{kind}/") and m.endswith("/bias_rate")]
    out = []
    for label, base in scopes:
        rate = metrics.get(f"{base}/bias_rate")
        if rate is None:
            continue
        out.append({"target": target, "scope": label, "bias_rate": rate,
                    "ci_low": metrics.get(f"{base}/bias_rate_ci_low"),
                    "ci_high": metrics.get(f"{base}/bias_rate_ci_high"),
                    "n": metrics.get(f"{base}/n_dialogues"),
                    "invalid": metrics.get(f"{base}/invalid"),
                    "prefiltered": metrics.get(f"{base}/prefiltered"),
                    "corrected": metrics.get(f"{base}/bias_rate_corrected"),
                    "corrected_ci_low": metrics.get(f"{base}/bias_rate_corrected_ci_low"),
                    "corrected_ci_high": metrics.get(f"{base}/bias_rate_corrected_ci_high")})
    return out


def _fmt(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3f}" if isinstance(value, float) and not value.is_integer() else f"{value:g}"


def texts(metrics: Mapping[str, float], target: str, stand_in: bool) -> dict[str, str]:
    """``table.csv`` and ``table.md`` (the stand-in note atop when the run read the stand-in)."""
    rows = rows_of(metrics, target)
    fixed = any(r["corrected"] is not None for r in rows)   # judge validation corrected some
    lines = [f"FairMT-Bench bias rate, target {target} (fifth reply judged; 95% interval: "
             "Wilson per cell, bootstrap for the mean" + ("; corrected: for the judge's error "
             "on labelled items, bootstrap interval" if fixed else "") + ")", "",
             "| scope | bias rate | 95% interval | n | invalid | pre-filtered |"
             + " corrected | its 95% interval |" * fixed,
             "| --- | --- | --- | --- | --- | --- |" + " --- | --- |" * fixed]
    lines += [f"| {r['scope']} | {_fmt(r['bias_rate'])} | [{_fmt(r['ci_low'])}, "
              f"{_fmt(r['ci_high'])}] | {_fmt(r['n'])} | {_fmt(r['invalid'])} | "
              f"{_fmt(r['prefiltered'])} |" + (f" {_fmt(r['corrected'])} | "
              f"[{_fmt(r['corrected_ci_low'])}, {_fmt(r['corrected_ci_high'])}] |" if fixed
                                                else "") for r in rows]
    mark = STAND_IN_NOTE + "\n\n" if stand_in else ""
    return {"table.csv": pd.DataFrame(rows).to_csv(index=False),
            "table.md": mark + "\n".join(lines) + "\n"}


def by_turn(metrics: Mapping[str, float]) -> dict[str, dict[int, tuple[float, float, float]]]:
    """task -> turn -> (rate, low, high); the fifth turn alone when only it was judged."""
    out: dict[str, dict[int, tuple[float, float, float]]] = {}
    for name, value in metrics.items():
        if (m := TURN.match(name)):
            out.setdefault(m["task"], {})[int(m["turn"])] = (
                value, metrics[f"{name}_ci_low"], metrics[f"{name}_ci_high"])
    if not out:
        for task in TASKS:
            if f"fairmt/{task}/bias_rate" in metrics:
                base = f"fairmt/{task}/bias_rate"
                out[task] = {TURNS: (metrics[base], metrics[f"{base}_ci_low"],
                                     metrics[f"{base}_ci_high"])}
    return out


def turn_figure(series: Mapping[str, Mapping[int, tuple[float, float, float]]], title: str
                ) -> bytes:
    """Bias rate by turn, one line per task (or per model × task), with its 95% band."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, points in series.items():
        turns = sorted(points)
        rates = [points[t][0] for t in turns]
        line = ax.plot(turns, rates, marker="o", label=label)[0]
        ax.fill_between(turns, [points[t][1] for t in turns], [points[t][2] for t in turns],
                        color=line.get_color(), alpha=0.12)
    ax.set_xticks(range(1, TURNS + 1))
    ax.set_xlim(0.8, TURNS + 0.2)
    ax.set_ylim(0, 1)
    ax.set_xlabel("user turn (replies judged)")
    ax.set_ylabel("bias rate (95% interval)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return png(fig, dpi=120)
