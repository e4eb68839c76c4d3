"""Detection figures: the confusion matrix of a judge and of each judge of an ensemble with its
macro-F1 (the study's Figure 3), demographic-context flips (Figure 4) and bootstrap stability of
trigger rates (Figure 5). Each writes one PNG and returns its path; the numbers come from
:mod:`benevaudit.metrics`, so a figure never recomputes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benevaudit.metrics.classification import confusion_counts
from benevaudit.metrics.detection import class_codes, three_way_metrics
from benevaudit.metrics.flips import ALL, DIRECTIONS, KINDS
from benevaudit.figure_titles import fit_titles
from benevaudit.plotting import paint_confusion, plt, save
from benevaudit.schema import CLASSES

CLASS_COLOURS = {"N": "#4c72b0", "OB": "#c44e52", "BB": "#dd8452"}
KIND_COLOURS = {"wrong": "#c44e52", "corrective": "#55a868", "other": "#b0b0b0"}
BAR_WIDTH = 0.6            # trigger-rate bars, in class slots
CAP_POINTS = 3             # their whiskers' cap size (the cap reaches this far either side)
STUDY_EVAL_FRACTION = 0.10   # the study's evaluation size: 10% of the corpus (Figure 5's line)


def _confusion_panel(ax: Any, labels: Sequence[str | None], pred: Sequence[str | None],
                     title: str) -> None:
    """One row-normalised 3×3 matrix over valid predictions, titled with its macro-F1.

    Invalid verdicts (pred None) are not a class: each row's tick says how many it had, so a
    judge that fails to answer on BB dialogues does not look better than it is. The macro-F1 is
    ``test/macro_f1`` as the run's metrics compute it (valid verdicts of labelled dialogues).
    """
    y, p = class_codes(list(labels), "labels"), class_codes(list(pred), "pred")
    if len(y) != len(p):
        raise ValueError(f"confusion_png: labels has {len(y)} entries but pred has {len(p)}")
    keep = (y >= 0) & (p >= 0)
    cm = confusion_counts(p[keep], y[keep])                            # [true, pred]
    invalid = [int(np.sum((y == i) & (p < 0))) for i in range(len(CLASSES))]
    rows = [c if n == 0 else f"{c}\n({n} invalid)" for c, n in zip(CLASSES, invalid)]
    f1 = three_way_metrics(y, list(pred))["test/macro_f1"]
    paint_confusion(ax, cm, f"{title}\nmacro-F1 {f1:.3f}" if f1 == f1
                    else f"{title}\nmacro-F1 n/a", rows=rows, fontsize=7)


def confusion_png(labels: Sequence[str | None], pred: Sequence[str | None], path: Path,
                  title: str) -> Path:
    """Row-normalised 3×3 confusion matrix (rows: true class), its macro-F1 in the title."""
    fig, ax = plt.subplots(figsize=(3.8, 3.5), dpi=150)
    _confusion_panel(ax, labels, pred, title)
    return save(fig, path)


def judges_confusion_png(labels: Sequence[str | None], preds: dict[str, Sequence[str | None]],
                         path: Path, title: str) -> Path:
    """Figure 3: each judge's confusion matrix side by side (the ensemble's too, when given),
    each panel titled with the judge's name and macro-F1."""
    if not preds:
        raise ValueError("judges_confusion_png: no judge predictions to draw")
    fig, axes = plt.subplots(1, len(preds), figsize=(0.4 + 3.0 * len(preds), 3.5),
                                   dpi=150, squeeze=False)
    for ax, (name, pred) in zip(axes[0], preds.items()):
        _confusion_panel(ax, labels, pred, name)
    fig.suptitle(title, fontsize=8)
    return save(fig, path)


def flips_png(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Figure 4 from :func:`benevaudit.metrics.flips.flip_table`'s ``table``: per user ability
    group, one bar of flips per direction, split into wrong and corrective (and ``other``: true
    OB, both verdicts wrong, only when there are any), each part labelled in white with its
    share where the label fits inside it as drawn, the total at the bar's end; a direction
    with no flips at all says "no flips"."""
    groups = [g for g in dict.fromkeys(table["user_ability"]) if g != ALL]
    kinds = [k for k in KINDS if k != "other" or table.loc[table["kind"] == k, "count"].sum() > 0]
    fig, axes = plt.subplots(1, len(DIRECTIONS), figsize=(7.2, 1.3 + 0.42 * len(groups)),
                             dpi=150, sharey=True, squeeze=False)
    y = np.arange(len(groups))
    labels: list[tuple[Any, Any]] = []       # (segment, its share label)
    for ax, (direction, (src, dst)) in zip(axes[0], DIRECTIONS.items()):
        part = table[table["direction"] == direction].set_index(["user_ability", "kind"])["count"]
        counts = np.array([[int(part.get((g, k), 0)) for k in kinds] for g in groups])  # [G, K]
        totals = counts.sum(axis=1)                                                     # [G]
        span = max(int(totals.max()) if len(totals) else 0, 1)
        left = np.zeros(len(groups))
        for i, kind in enumerate(kinds):
            bars = ax.barh(y, counts[:, i], left=left, height=0.62, color=KIND_COLOURS[kind],
                           label=kind)
            for g, bar in enumerate(bars):
                share = counts[g, i] / totals[g] if totals[g] else 0.0
                if counts[g, i]:
                    labels.append((bar, ax.text(left[g] + counts[g, i] / 2, y[g],
                                                f"{100 * share:.0f}%", ha="center",
                                                va="center", fontsize=6, color="white")))
            left += counts[:, i]
        for g, total in enumerate(totals):
            ax.text(total + 0.015 * span, y[g], str(int(total)), va="center", fontsize=6)
        ax.set_xlim(0, span * 1.15)
        if not totals.sum():           # a small run may flip nothing: say so, not blank axes
            ax.text(0.5, 0.5, "no flips", transform=ax.transAxes, ha="center", va="center",
                    fontsize=8, color="0.35")
        ax.set_yticks(y, [g.replace("with ", "").replace(" disability", "") for g in groups],
                      fontsize=7)
        ax.set_title(f"{src} → {dst}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("flips (dialogues)", fontsize=7)
    axes[0][0].set_ylabel("user ability", fontsize=7)
    axes[0][0].invert_yaxis()                      # shared: the first group on top in both
    axes[0][-1].legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(title, fontsize=8)
    fit_titles(fig)                    # laid out first: a share is kept only where it fits
    renderer = fig.canvas.get_renderer()
    for bar, label in labels:
        if not _fits(label.get_window_extent(renderer), bar.get_window_extent(renderer)):
            label.remove()             # the bar's total still stands at its end
    return save(fig, path)


def _fits(box: Any, room: Any, pad: float = 1.0) -> bool:
    """Whether a drawn extent lies inside another with ``pad`` pixels to spare."""
    return (box.x0 >= room.x0 + pad and box.x1 <= room.x1 - pad and box.y0 >= room.y0 + pad
            and box.y1 <= room.y1 - pad)


def bootstrap_png(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Figure 5: mean trigger rate per class against evaluation size, with its 95% band.

    ``table`` is :func:`benevaudit.metrics.bootstrap.bootstrap_trigger_rates`'s; the dotted
    line is the pool's own rate, which the means should approach; the dashed one marks the
    study's evaluation size, 10% of the corpus.
    """
    fig, ax = plt.subplots(figsize=(4.8, 3.4), dpi=150)
    for c in CLASSES:
        rows = table[table["class"] == c].sort_values("fraction")
        if rows.empty:
            continue
        pct = 100 * rows["fraction"].to_numpy()
        colour = CLASS_COLOURS.get(c)
        ax.plot(pct, rows["mean"], marker="o", ms=3, color=colour, label=f"TR_{c}")
        ax.fill_between(pct, rows["low"], rows["high"], color=colour, alpha=0.2, lw=0)
        if "pool_rate" in rows:
            ax.axhline(rows["pool_rate"].iloc[0], color=colour, ls=":", lw=0.8)
    ax.axvline(100 * STUDY_EVAL_FRACTION, color="#555", ls="--", lw=0.9,
               label=f"the study's size, {100 * STUDY_EVAL_FRACTION:g}%")
    ax.set_xscale("log")
    ax.tick_params(labelsize=7)
    ax.set_xlabel("evaluation size (% of corpus, log scale)", fontsize=7)
    ax.set_ylabel("trigger rate (mean, 95% band)", fontsize=7)
    ax.set_ylim(-0.02, 1.02)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.legend(fontsize=7, framealpha=0.85, edgecolor="none")
    ax.set_title(title, fontsize=8)
    return save(fig, path)


def _rate_label(ax: Any, x: float, rate: float, low: float, high: float) -> None:
    """The rate's percentage in white inside its bar, below the interval's lower whisker, when
    it fits there as drawn; else in black on the white above the upper whisker. Measured on the
    laid-out figure: a label wider than its bar would lose its first digit to the background."""
    renderer = ax.figure.canvas.get_renderer()
    text = f"{100 * rate:.1f}%"
    label = ax.text(x, low / 2, text, ha="center", va="center", fontsize=7, color="white")
    box = label.get_window_extent(renderer)
    (x0, y0), (x1, y1) = ax.transData.transform([(x - BAR_WIDTH / 2, 0), (x + BAR_WIDTH / 2, low)])
    pad = 2.0                                                # px from the bar's edges
    cap = CAP_POINTS * ax.figure.dpi / 72 + pad              # px below the lower cap's centre
    if box.x0 >= x0 + pad and box.x1 <= x1 - pad and box.y0 >= y0 + pad and box.y1 <= y1 - cap:
        return
    label.remove()
    ax.annotate(text, (x, high), xytext=(0, CAP_POINTS + 1), textcoords="offset points",
                ha="center", va="bottom", fontsize=7, color="black")


def trigger_png(metrics: dict[str, float], path: Path, title: str) -> Path:
    """Trigger rate per true class with its 95% Wilson interval, and the gap Δ = TR_OB − TR_BB:
    the study's headline (Figure 3), one detector per figure. The figure is laid out before the
    rate labels are placed, since where a label fits depends on the bars' drawn size."""
    fig, ax = plt.subplots(figsize=(3.6, 3.0), dpi=150)
    drawn = []
    for i, c in enumerate(CLASSES):
        rate = metrics.get(f"trigger/TR_{c}", float("nan"))
        low = metrics.get(f"trigger/TR_{c}_ci_low", rate)
        high = metrics.get(f"trigger/TR_{c}_ci_high", rate)
        if rate != rate:                                     # no valid verdict of this class
            ax.text(i, 0.02, "n/a", ha="center", fontsize=7)
            continue
        ax.bar(i, rate, color=CLASS_COLOURS.get(c), width=BAR_WIDTH)
        ax.errorbar(i, rate, yerr=[[rate - low], [high - rate]], color="black",
                    capsize=CAP_POINTS, lw=0.8)
        drawn.append((i, rate, low, high))
    delta = metrics.get("trigger/delta_OB_BB", float("nan"))
    ax.set_xticks(range(len(CLASSES)), [f"TR_{c}" for c in CLASSES], fontsize=7)
    ax.tick_params(labelsize=7)
    ax.set_xlim(-0.5, len(CLASSES) - 0.5)
    ax.set_ylim(0, 1.12)                                     # room for a label above 100%
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel("share of dialogues flagged (95% Wilson)", fontsize=7)
    gap = "n/a" if delta != delta else f"{100 * delta:+.1f} pts"
    ax.set_title(f"{title}\nΔ OB−BB {gap}", fontsize=8)
    fit_titles(fig)
    for bar in drawn:
        _rate_label(ax, *bar)
    return save(fig, path)
