"""Representation shift: where a model puts the clean test classes relative to its own training
classes (the benevolent-bias study's Appendix E).

The representation is the *pooler output*: tanh(W·h_[CLS] + b) of the final layer, the vector
the classification head reads (falling back to the final-layer [CLS] hidden state for a model
without a pooler). Training and clean-test vectors are projected onto the plane through the
three training-class centroids c_N, c_OB, c_BB, with origin c_N and an orthonormal basis from
Gram-Schmidt on (c_OB − c_N, c_BB − c_N), so the centroid triangle keeps its true side lengths.
Arrows run from each training centroid to the mean of the same class on the test set; the
displacement ‖mean_test(c) − c_c‖ is measured in the full space, not the plane. The shares of
test N and OB predicted BB say whether the shift pushes them towards benevolent bias.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benevaudit.encoders.encoding import encode_texts, pad_batch
from benevaudit.encoders.models import attention_implementation
from benevaudit.plotting import plt, png
from benevaudit.schema import CLASS_INDEX, CLASSES, Dialogue
from benevaudit.text import render_turns


@dataclass
class Plane:
    origin: np.ndarray  # [D], c_N
    basis: np.ndarray   # [2, D], orthonormal rows

    def project(self, x: np.ndarray) -> np.ndarray:
        """[N, D] -> [N, 2] coordinates in the plane."""
        return (x - self.origin) @ self.basis.T


@dataclass
class ShiftResult:
    metrics: dict[str, float]
    plane: Plane
    train_xy: np.ndarray      # [N_train, 2]
    test_xy: np.ndarray       # [N_test, 2]
    train_labels: np.ndarray  # [N_train]
    test_labels: np.ndarray   # [N_test]


def class_centroids(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """[N, D], [N] class indices -> [C, D]; every class must be present."""
    missing = [CLASSES[c] for c in range(len(CLASSES)) if not (labels == c).any()]
    if missing:
        raise ValueError(f"representation shift needs every class; none of {missing} present")
    return np.stack([x[labels == c].mean(axis=0) for c in range(len(CLASSES))])


def centroid_plane(centroids: np.ndarray) -> Plane:
    """The plane through three centroids [3, D], origin c_N, Gram-Schmidt basis."""
    u = centroids[1] - centroids[0]
    v = centroids[2] - centroids[0]
    e1 = u / np.linalg.norm(u)
    w = v - (v @ e1) * e1
    if np.linalg.norm(w) < 1e-12 * max(float(np.linalg.norm(v)), 1.0):
        raise ValueError("the three training centroids are collinear; no plane through them")
    return Plane(centroids[0], np.stack([e1, w / np.linalg.norm(w)]))


def shift_geometry(train_x: np.ndarray, train_labels: np.ndarray, test_x: np.ndarray,
                   test_labels: np.ndarray, test_preds: np.ndarray) -> ShiftResult:
    """Projection, displacements and BB shares from embeddings; labels/preds are class indices."""
    train_c = class_centroids(train_x, train_labels)                  # [3, D]
    test_c = class_centroids(test_x, test_labels)                     # [3, D]
    plane = centroid_plane(train_c)
    metrics: dict[str, float] = {}
    for i, c in enumerate(CLASSES):
        metrics[f"shift/displacement_{c}"] = float(np.linalg.norm(test_c[i] - train_c[i]))
    bb = CLASS_INDEX["BB"]
    for c in ("N", "OB"):
        metrics[f"shift/share_{c}_pred_BB"] = float(
            (test_preds[test_labels == CLASS_INDEX[c]] == bb).mean())
    pairs = [np.linalg.norm(train_c[i] - train_c[j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    metrics["shift/centroid_distance_mean"] = float(np.mean(pairs))
    return ShiftResult(metrics, plane, plane.project(train_x), plane.project(test_x),
                       train_labels, test_labels)


def pooled_embeddings(model: Any, tokenizer: Any, dialogues: Sequence[Dialogue],
                      batch_size: int = 32, max_length: int = 512,
                      head_tokens: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """(pooler outputs [N, D], predicted class indices [N]) in input order."""
    import torch  # torch is heavy and loads on first use

    enc = encode_texts(tokenizer, [render_turns(d.turns) for d in dialogues], max_length,
                       head_tokens)
    device = next(model.parameters()).device
    order = sorted(range(len(dialogues)), key=lambda i: len(enc.input_ids[i]))
    emb = np.zeros((len(dialogues), model.config.hidden_size), dtype=np.float32)
    preds = np.zeros(len(dialogues), dtype=np.int64)
    captured: list[Any] = []
    # one forward per batch: the base model's output is captured on its way to the head
    hook = model.base_model.register_forward_hook(lambda _m, _i, out: captured.append(out))
    model.eval()
    try:
        with torch.no_grad(), attention_implementation(model, "sdpa"):
            for lo in range(0, len(order), batch_size):
                idx = order[lo: lo + batch_size]
                batch = {k: v.to(device) for k, v in
                         pad_batch([enc.input_ids[i] for i in idx], tokenizer.pad_token_id).items()}
                logits = model(**batch).logits                               # [b, C]
                base = captured.pop()
                pooled = getattr(base, "pooler_output", None)
                if pooled is None:
                    pooled = base.last_hidden_state[:, 0]                    # [b, D]
                emb[idx] = pooled.float().cpu().numpy()
                preds[idx] = logits.argmax(dim=-1).cpu().numpy()
    finally:
        hook.remove()
    return emb, preds


def representation_shift(model: Any, tokenizer: Any, train: Sequence[Dialogue],
                         test: Sequence[Dialogue],
                         batch_size: int, max_length: int, head_tokens: int) -> ShiftResult:
    """Embed a model's training and clean test dialogues and measure the shift between them."""
    for name, ds in (("train", train), ("test", test)):
        bad = [d.id for d in ds if d.label not in CLASS_INDEX]
        if bad:
            raise ValueError(f"representation shift: {name} dialogue {bad[0]!r} has label "
                             f"{next(d.label for d in ds if d.id == bad[0])!r}; expected one of "
                             f"{list(CLASSES)}")
    train_x, _ = pooled_embeddings(model, tokenizer, train, batch_size, max_length, head_tokens)
    test_x, test_pred = pooled_embeddings(model, tokenizer, test, batch_size, max_length,
                                          head_tokens)
    result = shift_geometry(train_x, np.array([CLASS_INDEX[str(d.label)] for d in train]),
                            test_x, np.array([CLASS_INDEX[str(d.label)] for d in test]), test_pred)
    return result


MAX_DRAWN = 6000  # dialogues drawn per split, as in the study's figure; centroids use all


def drawn(n: int, cap: int = MAX_DRAWN, seed: int = 0) -> np.ndarray:
    """Indices of the points drawn: all of them, or a seeded ``cap`` of them in input order."""
    if n <= cap:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=cap, replace=False))


def plot_shift(result: ShiftResult, run: str, max_drawn: int = MAX_DRAWN,
               seed: int = 0) -> bytes:
    """The study's Figure 6 panel: training points faint and test points hollow (at most
    ``max_drawn`` of each split), a cross on each training centroid and on each test-class
    mean, an arrow between them labelled with the full-space displacement, and the shares of
    test N and OB predicted BB in the title."""
    colours = {"N": "tab:blue", "OB": "tab:red", "BB": "tab:orange"}
    fig, ax = plt.subplots(figsize=(5.5, 4.8))
    train_idx = drawn(len(result.train_xy), max_drawn, seed)
    test_idx = drawn(len(result.test_xy), max_drawn, seed + 1)
    for i, c in enumerate(CLASSES):
        start = result.train_xy[result.train_labels == i].mean(axis=0)   # all points: exact
        end = result.test_xy[result.test_labels == i].mean(axis=0)
        tr = result.train_xy[train_idx][result.train_labels[train_idx] == i]
        te = result.test_xy[test_idx][result.test_labels[test_idx] == i]
        ax.scatter(tr[:, 0], tr[:, 1], s=6, alpha=0.25, color=colours[c], label=f"train {c}")
        ax.scatter(te[:, 0], te[:, 1], s=10, facecolors="none", edgecolors=colours[c],
                   alpha=0.6, label=f"test {c}")
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="->", color=colours[c], lw=2))
        ax.scatter(*start, marker="+", s=220, lw=2.5, color="black", zorder=5)
        ax.scatter(*end, marker="X", s=110, lw=0.8, color=colours[c], edgecolors="black",
                   zorder=5)
        ax.annotate(c, xy=start, xytext=(-8, 8), textcoords="offset points", ha="right",
                    fontsize=11, weight="bold", color=colours[c],
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
        shift = result.metrics[f"shift/displacement_{c}"]
        ax.annotate(f"‖Δ{c}‖ = {shift:.2f}", xy=(start + end) / 2, fontsize=8,
                    color=colours[c], xytext=(6, -10), textcoords="offset points",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.75))
    ax.set_xlabel("plane axis 1 (c_OB − c_N)")
    ax.set_ylabel("plane axis 2 (⊥, towards c_BB)")
    ax.legend(fontsize=7, markerscale=2, ncol=2)
    shares = " · ".join(f"{c} {100 * result.metrics[f'shift/share_{c}_pred_BB']:.1f}%"
                        for c in ("N", "OB"))
    ax.set_title(f"Representation shift, train → test (+ centroid, × test mean)\n"
                 f"test predicted BB: {shares}\nrun {run}", fontsize=9)
    return png(fig, dpi=120)   # titles fitted, closed
