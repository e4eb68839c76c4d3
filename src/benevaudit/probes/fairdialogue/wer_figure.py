"""The run figure of FairDialogue's spoken replies (``wer.png``): Whisper's word error rate against the API's
own transcripts, over all replies and per speaker group, each bar with its 95% bootstrap
interval over items. Whether the transcriber hears one group's replies worse, and whether a
handful of replies can say so, is then visible beside the yes-rate figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from benevaudit.metrics.wer import wer_metrics, wer_resamples
from benevaudit.plotting import plt, png

N_RESAMPLES = 1000
ALL = "all replies"


def panels_of(resamples: Mapping[str, tuple[float, np.ndarray]], pairs: Mapping[str, float]
              ) -> dict[str, dict[str, tuple[float, float, float]]]:
    """``{panel: {bar: (wer, low, high)}}``: one panel of all replies, one per attribute; each
    bar labelled with its replies (``pairs``: ``asr/wer_pairs…`` of :func:`wer_metrics`)."""
    panels: dict[str, dict[str, tuple[float, float, float]]] = {}
    for name, (value, reps) in sorted(resamples.items()):
        finite = reps[np.isfinite(reps)]
        low, high = (np.percentile(finite, [2.5, 97.5]) if finite.size
                     else (float("nan"), float("nan")))
        parts = name.split("/")
        panel, bar = (parts[2], parts[3]) if len(parts) == 4 else (ALL, "all")
        n = int(pairs.get(name.replace("asr/wer", "asr/wer_pairs", 1), 0))
        panels.setdefault(panel, {})[f"{bar}\n(n={n})"] = (value, float(low), float(high))
    return {ALL: panels.pop(ALL), **panels} if ALL in panels else panels


def wer_figure(rows: Iterable[Mapping[str, Any]], target: str, seed: int
               ) -> Callable[[], bytes] | None:
    """The figure's painter for a run's rows, titled with the target; None where no reply has
    both transcripts."""
    rows = list(rows)
    resamples = wer_resamples(rows, N_RESAMPLES, seed)
    if not resamples:
        return None
    panels = panels_of(resamples, wer_metrics(rows))

    def draw() -> bytes:
        cols = min(3, len(panels))
        n_rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(n_rows, cols, figsize=(4.2 * cols, 3.2 * n_rows),
                                 squeeze=False)
        for ax, (panel, bars) in zip(axes.flat, panels.items(), strict=False):
            values = [v for v, _, _ in bars.values()]
            errors = [[max(0.0, v - lo) for v, lo, _ in bars.values()],
                      [max(0.0, hi - v) for v, _, hi in bars.values()]]
            ax.bar(range(len(bars)), values, yerr=errors, capsize=4, color="#4C72B0")
            ax.set_xticks(range(len(bars)), list(bars), fontsize=8)
            ax.set_ylim(bottom=0)
            ax.set_title(panel, fontsize=9)
            ax.set_ylabel("WER (95% bootstrap interval)", fontsize=8)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.suptitle(f"{target}: Whisper's WER against the API's transcripts", fontsize=10)
        fig.tight_layout()
        return png(fig, dpi=120)
    return draw
