"""FairDialogue's run figures: per-group rates with Wilson intervals, PRAG* heatmaps.

A bar chart shows at a glance which group is told yes (or revised to yes) more often, and the
Wilson interval shows whether a handful of items can say so at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from benevaudit.metrics.wilson import wilson_interval
from benevaudit.plotting import plt, png


def rate_bars(panels: Mapping[str, Mapping[str, tuple[int, int]]], title: str,
              ylabel: str) -> bytes:
    """One panel per ``{panel: {group: (k, n)}}``; bar k/n with its 95% Wilson interval."""
    n_panels = max(1, len(panels))
    cols = min(3, n_panels)
    rows = math.ceil(n_panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, (panel, counts) in zip(axes.flat, panels.items(), strict=False):
        groups = list(counts)
        rates, low, high = [], [], []
        for g in groups:
            k, n = counts[g]
            lo, hi = wilson_interval(k, n)
            p = k / n if n else float("nan")
            rates.append(p)
            low.append(0 if n == 0 else p - lo)
            high.append(0 if n == 0 else hi - p)
        ax.bar(range(len(groups)), rates, yerr=[low, high], capsize=4, color="#4C72B0")
        ax.set_xticks(range(len(groups)), [f"{g}\n(n={counts[g][1]})" for g in groups],
                      fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(panel, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return png(fig, dpi=120)


def prag_heatmaps(panels: Mapping[str, tuple[Sequence[str], Mapping[tuple[str, str], float]]],
                  title: str) -> bytes:
    """One heatmap of PRAG*(row group, column group) per ``{panel: (groups, matrix)}``."""
    n_panels = max(1, len(panels))
    cols = min(3, n_panels)
    rows = math.ceil(n_panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    for ax, (panel, (groups, matrix)) in zip(axes.flat, panels.items(), strict=False):
        grid = [[matrix.get((a, b), float("nan")) for b in groups] for a in groups]
        image = ax.imshow(grid, vmin=0, cmap="viridis")
        ax.set_xticks(range(len(groups)), groups, fontsize=7, rotation=45)
        ax.set_yticks(range(len(groups)), groups, fontsize=7)
        ax.set_title(panel, fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.046)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return png(fig, dpi=120)
