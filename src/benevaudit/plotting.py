"""Figure set-up shared by every figure of the library: matplotlib on the Agg backend (files,
never a window), saving with titles that fit (:mod:`benevaudit.figure_titles`), and the
confusion-matrix painter of the detection and fine-tuning figures.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

from benevaudit.figure_titles import fit_titles
from benevaudit.files import write_atomically
from benevaudit.schema import CLASSES

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def png(fig: Any, dpi: float | None = None, fit: bool = True) -> bytes:
    """Fit the titles (``fit=False``: a figure that places its own axes), render ``fig`` as a
    PNG and close it: a painter below ``pipelines/`` returns these bytes, and the run's writer
    writes them."""
    if fit:
        fit_titles(fig)
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", **({} if dpi is None else {"dpi": dpi}))
    finally:
        plt.close(fig)
    return buffer.getvalue()


def write_png(path: Path, data: bytes) -> Path:
    """A PNG's bytes written whole at ``path`` (its folder made where missing): a killed run
    leaves no torn image."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(path, lambda tmp: tmp.write_bytes(data))


def save(fig: Any, path: Path, dpi: float | None = None, fit: bool = True) -> Path:
    """:func:`png` written at ``path`` (the report's and ``outputs/``' own figures)."""
    return write_png(path, png(fig, dpi, fit))


def paint_confusion(ax: Any, counts: np.ndarray, title: str,
                    rows: Sequence[str] = CLASSES, fontsize: float | None = None) -> None:
    """A confusion matrix of ``counts`` [true, pred] on ``ax``, row-normalised: each cell its
    share of the row and its count, the true class down (``rows`` labels them), the predicted
    class across; ``fontsize`` sets the ticks and axis labels (None: matplotlib's default)."""
    counts = np.asarray(counts, dtype=float)
    norm = counts / np.maximum(counts.sum(1, keepdims=True), 1)
    ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
    for i in range(len(CLASSES)):
        for j in range(len(CLASSES)):
            ax.text(j, i, f"{norm[i, j]:.2f}\n({int(counts[i, j])})", ha="center", va="center",
                    fontsize=7, color="white" if norm[i, j] > 0.5 else "black")
    ax.set_xticks(range(len(CLASSES)), CLASSES, fontsize=fontsize)
    ax.set_yticks(range(len(CLASSES)), list(rows), fontsize=fontsize)
    ax.set_xlabel("predicted", fontsize=fontsize)
    ax.set_ylabel("true", fontsize=fontsize)
    ax.set_title(title, fontsize=8)
