"""Every figure as the study draws it, and no title cut off at the figure's edge.

Each figure is rendered for real; at ``savefig`` the figure is drawn and every title's text
extent (``Text.get_window_extent`` with the canvas renderer) must lie inside the figure.
Run directories get long, realistic names, the case that used to overflow.
"""

import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from benevaudit.metrics.flips import flip_table
from benevaudit.figure_titles import titles_of

matplotlib.use("Agg")

RUN = "2026-12-02_12-34-56_experiment=paper,intervention=punct+mask,seed=42"
SAVED: list[Figure] = []


@pytest.fixture(autouse=True)
def checked_savefig(monkeypatch):
    """Check the titles of every figure as it is saved, and keep the figure for the test."""
    real = Figure.savefig
    SAVED.clear()

    def savefig(fig, *args, **kwargs):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        frame = fig.bbox
        for title in titles_of(fig):
            box = title.get_window_extent(renderer)
            assert box.x0 >= frame.x0 - 0.5 and box.x1 <= frame.x1 + 0.5, (
                f"title {title.get_text()!r} runs off the side: {box} in {frame}")
            assert box.y0 >= frame.y0 - 0.5 and box.y1 <= frame.y1 + 0.5, (
                f"title {title.get_text()!r} runs off the top: {box} in {frame}")
        SAVED.append(fig)
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)


def run_dir(tmp_path):
    d = tmp_path / RUN
    d.mkdir()
    return d


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def titles(fig) -> list[str]:
    return [t.get_text().replace("\n", " ") for t in titles_of(fig)]


def names_the_run(fig) -> bool:
    """The run id is still in a title, however it was wrapped."""
    return any(RUN in "".join(t.get_text().split()) for t in titles_of(fig))


def test_train_confusion_matrix_title_fits(tmp_path):
    from benevaudit.audit.evaluation import plot_confusion

    labels, preds = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 1, 2, 0])
    drawn = plot_confusion(labels, preds,
                           "/models/checkpoints/bert-base-uncased-benevolent · punct+mask · "
                           f"test · macro-F1 0.938\nrun {RUN}")
    assert drawn.startswith(b"\x89PNG")
    assert names_the_run(SAVED[-1])
    assert any("macro-F1 0.938" in t for t in titles(SAVED[-1]))


def test_fig3_each_judge_matrix_has_its_macro_f1(tmp_path):
    from benevaudit.outputs.figures.detection import confusion_png, judges_confusion_png

    labels = ["N", "N", "OB", "OB", "BB", "BB"]
    # judge a: all right (macro-F1 1); judge b: OB read as BB twice -> per-class F1
    # N 1, OB 0, BB 2/3 (precision 2/4, recall 1): macro (1 + 0 + 0.6667) / 3 = 0.556
    preds = {"judge_a": list(labels), "judge_b": ["N", "N", "BB", "BB", "BB", "BB"],
             "ensemble": ["N", "N", "OB", None, "BB", "BB"]}   # one invalid: F1 over 5 valid
    judges_confusion_png(labels, preds, run_dir(tmp_path) / "confusion_judges.png",
                         f"llm judges, operational · n=6 · run {RUN}")
    fig = SAVED[-1]
    panel = [ax.get_title().replace("\n", " ") for ax in fig.axes]
    assert panel == ["judge_a macro-F1 1.000", "judge_b macro-F1 0.556",
                     "ensemble macro-F1 1.000"]
    confusion_png(labels, preds["judge_b"], tmp_path / "cm.png", "judge_b · n=6")
    assert titles(SAVED[-1]) == ["judge_b · n=6 macro-F1 0.556"]


def test_fig4_flip_bars_show_composition_and_totals(tmp_path):
    rows = [("a", "N", "none", "N", "BB"), ("b", "BB", "none", "N", "BB"),
            ("j", "N", "none", "N", "BB"), ("k", "N", "none", "N", "BB"),
            ("d", "BB", "with sensory disability", "BB", "N"),
            ("f", "N", "with sensory disability", "BB", "N")]
    frame = pd.DataFrame(rows, columns=["id", "label", "user_ability", "without", "with"])
    with_df = frame.rename(columns={"with": "pred"}).drop(columns="without")
    without_df = frame.rename(columns={"without": "pred"}).drop(columns="with")
    from benevaudit.outputs.figures.detection import flips_png

    flips_png(flip_table(with_df, without_df), run_dir(tmp_path) / "flips.png",
              f"llama-3.1-8b judge, operational: verdict flips when demographics are shown "
              f"· run {RUN}")
    n_to_bb, bb_to_n = SAVED[-1].axes
    # none: 3 wrong + 1 corrective of 4 flips N->BB; sensory: 1 wrong + 1 corrective BB->N
    assert sorted(texts_of(n_to_bb)) == sorted(["75%", "25%", "4", "0"])
    assert sorted(texts_of(bb_to_n)) == sorted(["50%", "50%", "0", "2"])


def test_fig4_share_labels_only_where_they_fit_their_segment(tmp_path):
    """29 wrong flips beside 1 corrective: the 97% label reads inside its segment, the 3% one
    would spill over a sliver of a segment and is left out (the total 30 still stands)."""
    rows = [(f"w{i}", "N", "none", "N", "BB") for i in range(29)] + [("c", "BB", "none", "N", "BB")]
    frame = pd.DataFrame(rows, columns=["id", "label", "user_ability", "without", "with"])
    with_df = frame.rename(columns={"with": "pred"}).drop(columns="without")
    without_df = frame.rename(columns={"without": "pred"}).drop(columns="with")
    from benevaudit.outputs.figures.detection import flips_png

    flips_png(flip_table(with_df, without_df), run_dir(tmp_path) / "flips.png", "flips")
    fig = SAVED[-1]
    FigureCanvasAgg(fig).draw()                          # the closed figure, drawn as saved
    renderer = fig.canvas.get_renderer()
    n_to_bb = fig.axes[0]
    assert sorted(texts_of(n_to_bb)) == ["30", "97%"]
    bars = [p.get_window_extent(renderer) for p in n_to_bb.patches]
    for label in n_to_bb.texts:
        if label.get_text().endswith("%"):
            box = label.get_window_extent(renderer)
            assert any(b.x0 < box.x0 and box.x1 < b.x1 and b.y0 < box.y0 and box.y1 < b.y1
                       for b in bars), label.get_text()


def texts_of(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_fig5_marks_the_study_evaluation_size(tmp_path):
    from benevaudit.outputs.figures.detection import bootstrap_png

    rows = [{"class": c, "fraction": f, "mean": 0.3, "low": 0.2, "high": 0.4, "pool_rate": 0.3}
            for c in ("N", "OB", "BB") for f in (0.005, 0.01, 0.05, 0.1, 0.2)]
    bootstrap_png(pd.DataFrame(rows), run_dir(tmp_path) / "bootstrap.png",
                  f"granite-guardian-3.3-8b · n=7257 · run {RUN}")
    ax = SAVED[-1].axes[0]
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 1 and list(dashed[0].get_xdata()) == [10.0, 10.0]


def test_trigger_rates_title_fits(tmp_path):
    from benevaudit.outputs.figures.detection import trigger_png

    metrics = {f"trigger/TR_{c}": r for c, r in (("N", 0.1), ("OB", 0.6), ("BB", 0.2))}
    metrics["trigger/delta_OB_BB"] = 0.4
    trigger_png(metrics, run_dir(tmp_path) / "trigger_rates.png",
                f"qwen3guard-gen-8b, context units, any turn · n=7257 · run {RUN}")


def rate_labels(fig) -> list:
    """The percentage labels of a trigger-rate figure, as drawn."""
    return [t for t in fig.axes[0].texts if t.get_text().endswith("%")]


def test_trigger_rate_labels_read_inside_or_above_their_bars(tmp_path):
    """100.0% on a full bar keeps its first digit, a 3% label sits on white in black, a label on
    a bar with room stays inside in white, clear of the interval's whiskers; each label lies
    wholly on its bar (white) or wholly off every bar and inside the axes (black)."""
    from matplotlib.colors import to_rgb

    from benevaudit.outputs.figures.detection import trigger_png

    metrics = {"trigger/TR_N": 0.03, "trigger/TR_N_ci_low": 0.01, "trigger/TR_N_ci_high": 0.08,
               "trigger/TR_OB": 1.0, "trigger/TR_OB_ci_low": 1.0, "trigger/TR_OB_ci_high": 1.0,
               "trigger/TR_BB": 0.64, "trigger/TR_BB_ci_low": 0.55,
               "trigger/TR_BB_ci_high": 0.72, "trigger/delta_OB_BB": 0.36}
    trigger_png(metrics, run_dir(tmp_path) / "trigger_rates.png",
                f"qwen3guard-gen-8b, context units, any turn · n=7257 · run {RUN}")
    fig = SAVED[-1]
    FigureCanvasAgg(fig).draw()                          # the closed figure, drawn as saved
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    frame = ax.get_window_extent(renderer)
    placed = {}
    for label in rate_labels(fig):
        box = label.get_window_extent(renderer)
        white = to_rgb(label.get_color()) == (1.0, 1.0, 1.0)
        if white:
            assert any(b.x0 < box.x0 and box.x1 < b.x1 and b.y0 < box.y0 and box.y1 < b.y1
                       for b in bars), f"white label {label.get_text()!r} leaves its bar: {box}"
        else:
            assert not any(b.overlaps(box) for b in bars), f"{label.get_text()!r} on a bar"
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and box.y1 <= frame.y1, (
                f"label {label.get_text()!r} runs out of the axes: {box} in {frame}")
        placed[label.get_text()] = "inside" if white else "above"
    assert placed == {"3.0%": "above", "100.0%": "inside", "64.0%": "inside"}
    for label in rate_labels(fig):                       # clear of the whiskers and caps
        box = label.get_window_extent(renderer)
        for line in ax.lines:
            assert not line.get_window_extent(renderer).overlaps(box), label.get_text()


def test_fig6_crosses_displacements_shares_and_at_most_6000_points(tmp_path):
    from benevaudit.audit.representation import MAX_DRAWN, plot_shift, shift_geometry

    rng = np.random.default_rng(0)
    centres = np.eye(3, 16) * 4.0                                          # [3, D]
    train_y = np.repeat([0, 1, 2], 2400)                                   # 7,200 training
    test_y = np.repeat([0, 1, 2], 300)
    train_x = centres[train_y] + rng.normal(size=(len(train_y), 16))
    test_x = centres[test_y] + 0.5 + rng.normal(size=(len(test_y), 16))
    preds = test_y.copy()
    preds[:30] = 2                                                         # 10% of test N
    result = shift_geometry(train_x, train_y, test_x, test_y, preds)
    assert plot_shift(result, RUN).startswith(b"\x89PNG")
    fig = SAVED[-1]
    ax = fig.axes[0]
    title = ax.get_title().replace("\n", " ")
    assert "test predicted BB: N 10.0% · OB 0.0%" in title and names_the_run(fig)
    labels = [t.get_text() for t in ax.texts]
    for c in ("N", "OB", "BB"):
        assert f"‖Δ{c}‖ = {result.metrics[f'shift/displacement_{c}']:.2f}" in labels
    points = [len(col.get_offsets()) for col in ax.collections]
    train_drawn = sum(points[i] for i in range(0, len(points), 4))         # train, test, +, x
    assert train_drawn == MAX_DRAWN and len(points) == 12
    crosses = [col for col in ax.collections if len(col.get_offsets()) == 1]
    assert len(crosses) == 6                                               # 3 centroids, 3 means
    centroid = np.array(crosses[0].get_offsets()[0])
    assert centroid == pytest.approx(result.train_xy[train_y == 0].mean(axis=0))


def test_faithfulness_title_fits(tmp_path):
    from benevaudit.audit.attribution.faithfulness import FaithfulnessResult, plot_curves

    ks = (1, 2, 5, 10)
    result = FaithfulnessResult(ks, {"rollout": np.array([0.1, 0.2, 0.3, 0.35]),
                                     "random": np.array([0.0, 0.01, 0.03, 0.05])}, {})
    plot_curves(result, RUN)
    assert names_the_run(SAVED[-1])


def test_dataset_analysis_titles_fit(tmp_path):
    from benevaudit.metrics.linguistic import MARKER_NAMES
    from benevaudit.analysis.markers import plot_marker_effects, plot_mtld

    effects = {c: {m: 0.3 for m in MARKER_NAMES} for c in ("OB", "BB")}
    plot_marker_effects(effects, "N", RUN)
    plot_mtld({c: {"mtld": [40.0, 50.0, math.nan]} for c in ("N", "OB", "BB")}, RUN)
    assert len(SAVED) == 2 and all(names_the_run(fig) for fig in SAVED)


def test_a_title_with_no_room_is_wrapped_not_clipped():
    import matplotlib.pyplot as plt

    from benevaudit.figure_titles import fit_titles

    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    ax.set_title("a very long title " * 6)
    fit_titles(fig)
    assert ax.get_title().count("\n") >= 3
    plt.close(fig)


def test_a_judge_ensemble_run_draws_each_judge_with_the_run_metrics(tmp_path):
    """detect.py on an ensemble's predictions (pred_<judge> beside pred) writes Figure 3 with
    the macro-F1 that metrics.json holds for each judge."""
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines import detect

    labels = ["N", "N", "OB", "OB", "BB", "BB"]
    frame = pd.DataFrame({"id": list("abcdef"), "label": labels,
                          "pred": ["N", "N", "OB", "BB", "BB", "BB"],
                          "pred_judge_a": labels, "pred_judge_b": ["N", "BB", "OB", "N", "BB", "OB"]})
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    conf = str(Path(__file__).resolve().parents[1] / "conf")
    with initialize_config_dir(conf, version_base="1.3"):
        cfg = compose("detect", overrides=[
            f"paths.root_dir={tmp_path}", f"paths.output_dir={tmp_path / 'run'}", "logger=none",
            "detector=external", f"predictions.path={path}"])
    metrics = detect.run(cfg)
    fig = next(f for f in SAVED if len(f.axes) == 3)
    panels = [ax.get_title().replace("\n", " ") for ax in fig.axes]
    assert panels == [f"judge_a macro-F1 {metrics['judges/judge_a/test/macro_f1']:.3f}",
                      f"judge_b macro-F1 {metrics['judges/judge_b/test/macro_f1']:.3f}",
                      f"ensemble macro-F1 {metrics['test/macro_f1']:.3f}"]
    assert (tmp_path / "run" / "confusion_judges.png").stat().st_size > 5000


def test_fig4_a_direction_without_flips_says_so(tmp_path):
    """Six dialogues where the verdict never changes: each panel says "no flips" rather than
    showing empty axes; with one N->BB flip only the other direction says it."""
    from benevaudit.outputs.figures.detection import flips_png

    rows = [(f"d{i}", "N", "none", "N", "N") for i in range(6)]
    frame = pd.DataFrame(rows, columns=["id", "label", "user_ability", "without", "with"])
    for n, (flipped, expected) in enumerate((([], ["no flips", "no flips"]),
                                              ([0], [None, "no flips"]))):
        data = frame.copy()
        data.loc[flipped, "with"] = "BB"
        with_df = data.rename(columns={"with": "pred"}).drop(columns="without")
        without_df = data.rename(columns={"without": "pred"}).drop(columns="with")
        (tmp_path / str(n)).mkdir()
        flips_png(flip_table(with_df, without_df), run_dir(tmp_path / str(n)) / "flips.png",
                  "flips")
        said = [("no flips" if "no flips" in texts_of(ax) else None) for ax in SAVED[-1].axes]
        assert said == expected
