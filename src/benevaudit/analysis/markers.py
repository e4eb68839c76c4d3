"""The corpus's size, per-dialogue markers and MTLD (``markers.csv``), and Cohen's d of each
biased class against a reference class (``marker_effects.csv``, ``marker_effects.png``,
``mtld_by_class.png``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from benevaudit.analysis.spec import MtldSpec
from benevaudit.analysis.tables import Part, csv_text
from benevaudit.metrics.diversity import mtld
from benevaudit.metrics.linguistic import MARKER_NAMES, dialogue_markers, marker_effects
from benevaudit.plotting import plt, png
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import words


def dialogue_words(d: Dialogue, speaker: str = "all") -> list[str]:
    """Words of a dialogue's turns (punctuation marks included), speaker prefixes excluded."""
    return [w for t in d.turns if speaker in ("all", t.speaker) for w in words(t.text)]


def corpus_size(dialogues: Sequence[Dialogue]) -> dict[str, float]:
    """The corpus as the study's Table 2 describes it: dialogues, messages (turns in all),
    mean turns per dialogue, and each class's count and share (its balance)."""
    n = len(dialogues)
    turns = sum(len(d.turns) for d in dialogues)
    out = {"analysis/n_dialogues": float(n), "analysis/n_messages": float(turns),
           "analysis/mean_turns": turns / n if n else 0.0}
    for c in CLASSES:
        k = sum(1 for d in dialogues if d.label == c)
        out |= {f"analysis/n_{c}": float(k), f"analysis/share_{c}": k / n if n else 0.0}
    return out


def per_dialogue(dialogues: Sequence[Dialogue], spec: MtldSpec, progress: bool,
                 ) -> list[dict[str, Any]]:
    """One row per dialogue: its markers and its MTLD (over lowercased words)."""
    rows = []
    for d in tqdm(dialogues, desc="markers+MTLD", disable=not progress):
        toks = [w.lower() for w in dialogue_words(d, spec.speaker) if w[0].isalnum()]
        rows.append({"id": d.id, "label": d.label, "generator": d.generator, "role": d.role,
                     **dialogue_markers(d.turns),
                     "mtld": mtld(toks, spec.threshold)})
    return rows


def marker_metrics(rows: Sequence[dict[str, Any]], reference: str) -> Part:
    """Class means and Cohen's d of every marker: the metrics, the effects table
    (``marker_effects.csv``), its bar chart and the MTLD boxes."""
    classes = [c for c in CLASSES if any(r["label"] == c for r in rows)]
    values: dict[str, dict[str, Sequence[float]]] = {
        c: {m: [r[m] for r in rows if r["label"] == c] for m in (*MARKER_NAMES, "mtld")}
        for c in classes}
    effects = marker_effects(values, reference)
    metrics: dict[str, float] = {}
    table = []
    for c in classes:
        metrics[f"analysis/n_{c}"] = float(len(values[c]["mtld"]))
        metrics[f"analysis/mtld_mean_{c}"] = float(np.nanmean(values[c]["mtld"]))
        metrics[f"analysis/mtld_sd_{c}"] = float(np.nanstd(values[c]["mtld"], ddof=1))
        for m in MARKER_NAMES:
            metrics[f"analysis/marker_mean/{c}/{m}"] = float(np.nanmean(values[c][m]))
    for c, per in effects.items():
        for m, d in per.items():
            metrics[f"analysis/d_{c}_vs_{reference}/{m}"] = d
            table.append({"marker": m, "class": c, "mean": np.nanmean(values[c][m]),
                          f"mean_{reference}": np.nanmean(values[reference][m]), "d": d})
    return Part(metrics, {"marker_effects.csv": csv_text(table)},
                {"marker_effects.png": partial(plot_marker_effects, effects, reference),
                 "mtld_by_class.png": partial(plot_mtld, values)})


def plot_marker_effects(effects: dict[str, dict[str, float]], reference: str, run: str) -> bytes:
    """Grouped bars of Cohen's d per marker, one colour per biased class (the study's Figure 2);
    the title names the run."""
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(len(effects), 1)
    x = np.arange(len(MARKER_NAMES))
    for i, (cls, per) in enumerate(effects.items()):
        ax.bar(x + (i - (len(effects) - 1) / 2) * width,
               [per[m] if math.isfinite(per[m]) else 0.0 for m in MARKER_NAMES], width, label=cls)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(x, [m.removesuffix("_rate") for m in MARKER_NAMES], rotation=30, ha="right")
    ax.set_ylabel(f"Cohen's d vs {reference}")
    ax.set_title(f"Patronising-language markers, each class vs {reference}"
                 f"\nrun {run}")
    ax.legend(title="class")
    return png(fig, dpi=150)


def plot_mtld(values: dict[str, dict[str, Sequence[float]]], run: str) -> bytes:
    fig, ax = plt.subplots(figsize=(5, 4))
    data = [[v for v in values[c]["mtld"] if math.isfinite(v)] for c in values]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(values) + 1), list(values))
    ax.set_ylabel("MTLD per dialogue")
    ax.set_title(f"Lexical diversity (MTLD, bidirectional, 0.72)\nrun {run}", fontsize=9)
    return png(fig, dpi=150)
