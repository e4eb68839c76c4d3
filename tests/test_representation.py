"""Representation shift: plane geometry on synthetic points, and the model-facing path on the
tiny BERT."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benevaudit.audit.representation import (  # noqa: E402
    centroid_plane,
    class_centroids,
    plot_shift,
    shift_geometry,
)
from benevaudit.schema import CLASSES, Dialogue, Turn  # noqa: E402


def synthetic(seed: int = 0, dim: int = 16, per_class: int = 50):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=5.0, size=(3, dim))
    labels = np.repeat(np.arange(3), per_class)
    x = centres[labels] + rng.normal(size=(len(labels), dim))
    return centres, x, labels


def test_projection_keeps_centroid_distances():
    _, x, labels = synthetic()
    cents = class_centroids(x, labels)
    plane = centroid_plane(cents)
    np.testing.assert_allclose(plane.basis @ plane.basis.T, np.eye(2), atol=1e-12)
    xy = plane.project(cents)                                         # [3, 2]
    np.testing.assert_allclose(xy[0], [0.0, 0.0], atol=1e-9)        # origin is c_N
    assert abs(xy[1, 1]) < 1e-9                                       # c_OB on axis 1
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert np.linalg.norm(xy[i] - xy[j]) == pytest.approx(np.linalg.norm(cents[i] - cents[j]))


def test_shift_metrics_known_displacement(tmp_path):
    _, train_x, train_y = synthetic(seed=1)
    test_x, test_y = train_x.copy(), train_y.copy()
    move = np.zeros(train_x.shape[1])
    move[3] = 2.0
    test_x[test_y == 0] += move                                       # only N moves, by 2
    preds = test_y.copy()
    preds[np.flatnonzero(test_y == 0)[:10]] = 2                       # 10 of 50 N -> BB
    res = shift_geometry(train_x, train_y, test_x, test_y, preds)
    assert res.metrics["shift/displacement_N"] == pytest.approx(2.0)
    assert res.metrics["shift/displacement_OB"] == pytest.approx(0.0, abs=1e-12)
    assert res.metrics["shift/share_N_pred_BB"] == pytest.approx(0.2)
    assert res.metrics["shift/share_OB_pred_BB"] == 0.0
    # in-plane arrow of N is the projection of the move onto the plane
    arrow = res.test_xy[test_y == 0].mean(0) - res.train_xy[train_y == 0].mean(0)
    np.testing.assert_allclose(arrow, res.plane.basis @ move, atol=1e-9)
    assert plot_shift(res, "r").startswith(b"\x89PNG")


def test_missing_class_and_collinear_centroids_are_errors():
    _, x, labels = synthetic()
    with pytest.raises(ValueError, match="BB"):
        class_centroids(x[labels < 2], labels[labels < 2])
    with pytest.raises(ValueError, match="collinear"):
        centroid_plane(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))


def test_representation_shift_on_tiny(tmp_path):
    pytest.importorskip("torch")
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.audit.representation import representation_shift

    def d(i: int) -> Dialogue:
        return Dialogue(id=f"d{i}", label=CLASSES[i % 3], role="mental_health", generator="t",
                        user={}, agent=None, turns=(Turn("user", "Help me plan."),
                                                    Turn("agent", f"Plan {i}: " + "rest " * i)))

    model, tok = load_classifier("tiny"), load_tokenizer("tiny")
    res = representation_shift(model, tok, [d(i) for i in range(9)], [d(i) for i in range(9, 15)],
                               batch_size=4, max_length=128, head_tokens=32)
    assert res.train_xy.shape == (9, 2) and res.test_xy.shape == (6, 2)
    assert {f"shift/displacement_{c}" for c in CLASSES} <= set(res.metrics)
    assert 0.0 <= res.metrics["shift/share_N_pred_BB"] <= 1.0
    assert plot_shift(res, "r").startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="label None"):
        representation_shift(model, tok, [*[d(i) for i in range(3)],
                                          Dialogue("u", None, "r", "g", {}, None,
                                                   (Turn("agent", "x"),))], [d(3)],
                             batch_size=4, max_length=128, head_tokens=32)
