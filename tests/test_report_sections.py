"""Each study's section renders from run directories that carry its metric names, with seeds
aggregated and intervals from the runs' rows; the values are checked against hand counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from report_fixtures import png, predictions, write_run


def _build(root, tmp_path, n=300):
    from benevaudit.pipelines.report_files import build_report

    files = build_report([root], tmp_path / "out", n_resamples=n)
    return {s.key: s for s in files.sections}, files


def _detection_run(path, detector: str, seed: int, with_rows: bool = True):
    frame = predictions(16, 0.75, seed).assign(triplet=lambda f: f.index // 3)
    frame["flagged"] = (frame["pred"] != "N").astype(object)
    frame.loc[5, "flagged"] = None                                    # one invalid verdict
    valid = frame.dropna(subset=["flagged"])
    pos, flag = valid["label"] != "N", valid["flagged"].astype(bool)
    tp, fp = (pos & flag).sum(), (~pos & flag).sum()
    fn = (pos & ~flag).sum()
    metrics = {"binary/accuracy": float((pos == flag).mean()), "binary/precision": tp / (tp + fp),
               "binary/recall": tp / (tp + fn), "binary/f1": 2 * tp / (2 * tp + fp + fn)}
    for c in ("N", "OB", "BB"):
        metrics[f"trigger/TR_{c}"] = float(flag[valid["label"] == c].mean())
        metrics[f"trigger/TR_{c}_ci_low"] = metrics[f"trigger/TR_{c}"] - 0.1
        metrics[f"trigger/TR_{c}_ci_high"] = metrics[f"trigger/TR_{c}"] + 0.1
    metrics["trigger/delta_OB_BB"] = metrics["trigger/TR_OB"] - metrics["trigger/TR_BB"]
    write_run(path, "detect", {"detector": detector, "data": "embedded"}, {"seed": seed},
              {k: float(v) for k, v in metrics.items()}, [f"detector={detector}", f"seed={seed}"],
              {"predictions.parquet": frame} if with_rows else {},
              ("confusion_matrix.png", "flips_ability.png", "bootstrap_trigger.png"))
    return metrics


def test_detection_table3(tmp_path):
    root = tmp_path / "detect"
    m1 = _detection_run(root / "0", "judge_plain", 1)
    m2 = _detection_run(root / "1", "judge_plain", 2)
    m3 = _detection_run(root / "2", "toxigen", 1, with_rows=False)
    sections, files = _build(root, tmp_path)
    table = sections["detection"].tables[0]
    assert [r[0] for r in table.rows] == ["judge_plain", "toxigen"]
    f1 = table.rows[0][4]
    assert (f1.n, f1.mean) == (2, pytest.approx((m1["binary/f1"] + m2["binary/f1"]) / 2))
    assert f1.low < f1.mean < f1.high
    tr_bb = table.rows[1][7]                      # no rows: the run's own Wilson interval
    assert (tr_bb.low, tr_bb.high) == (pytest.approx(m3["trigger/TR_BB"] - 0.1),
                                       pytest.approx(m3["trigger/TR_BB"] + 0.1))
    names = [f.path.name for f in sections["detection"].figures]
    assert names.count("flips_ability.png") == 3 and "bootstrap_trigger.png" in names
    assert all("detector " in f.caption for f in sections["detection"].figures)


def test_detection_rows_say_what_sets_a_run_apart_and_skip_flips_runs(tmp_path):
    root = tmp_path / "detect"
    _detection_run(root / "with", "judge_operational", 1)
    _detection_run(root / "without", "judge_operational", 1)
    cfg = root / "without" / ".hydra" / "config.yaml"
    cfg.write_text(cfg.read_text() + "detector: {kind: judge, demographics: false}\n")
    write_run(root / "flips", "detect", {"detector": "judge_operational"}, {"seed": 1},
              {"flips/N_to_BB/wrong": 2.0}, figures=("flips.png",))
    sections, _ = _build(root, tmp_path)
    table = sections["detection"].tables[0]
    assert [r[0] for r in table.rows] == ["judge_operational",
                                          "judge_operational (no demographics)"]
    assert "flips.png" in [f.path.name for f in sections["detection"].figures]


def test_detection_replicates_match_hand_counts():
    from benevaudit.report.intervals import detection_replicates

    frame = pd.DataFrame({"label": ["N", "N", "OB", "BB", "BB"], "flagged": [True, False, True,
                                                                             False, None]})
    reps = detection_replicates(frame, n_resamples=2000, seed=1)
    # the bootstrap centres on the full-sample value: TP=1, FP=1, FN=1 -> precision 0.5
    assert np.nanmean(reps["binary/precision"]) == pytest.approx(0.5, abs=0.06)
    assert set(np.unique(reps["trigger/TR_OB"][np.isfinite(reps["trigger/TR_OB"])])) <= {0.0, 1.0}


def _cobia_run(path, target: str, flip_metric: bool = False):
    rows = []
    rng = np.random.default_rng(0)
    for i in range(20):
        category = ("gender", "race")[i % 2]
        for method in ("hcc", "scc", "zero_shot"):
            verdict = "biased" if rng.random() < 0.4 else "not_biased"
            rows.append({"id": f"it{i}", "group": f"g{i}", "category": category, "method": method,
                         "messages": "[]", "response": "…", "bias_verdict": verdict,
                         "bias_raw": verdict, "nli_verdict": "enforces" if i % 3 else "neutral",
                         "nli_raw": "x"})
    frame = pd.DataFrame(rows)
    frame.loc[0, "bias_verdict"] = "unparseable"
    metrics = {"cobia/skipped": 33.0, "cobia/invalid/bias": 1.0, "cobia/invalid/nli": 0.0,
               "cobia/judge/bias/invalid_rate": 1 / len(frame), "cobia/judge/nli/invalid_rate": 0.0}
    for judge in ("bias", "nli"):
        codes = frame[f"{judge}_verdict"].map({"biased": 1.0, "not_biased": 0.0, "enforces": 1.0,
                                               "neutral": 0.0})
        for category in ("all", "gender", "race"):
            part = frame if category == "all" else frame[frame["category"] == category]
            for method, g in part.groupby("method"):
                metrics[f"cobia/bias_rate/{method}/{judge}/{category}"] = float(
                    codes[g.index].dropna().mean())
            hs = part[part["method"].isin(["hcc", "scc"])]
            metrics[f"cobia/ucc/{judge}/{category}"] = float(
                codes[hs.index].groupby(hs["id"]).max().dropna().mean())
    if flip_metric:
        metrics["cobia/bias_rate/hcc/bias/gender"] += 0.25           # rows no longer match
    write_run(path, "probe", {"probe": "cobia", "target": target}, {}, metrics,
              [f"target={target}"], {"responses.parquet": frame}, ("bias_rates.png",))
    return metrics


def test_cobia_score_tables(tmp_path):
    root = tmp_path / "cobia"
    m = _cobia_run(root / "0", "embedded")
    _cobia_run(root / "1", "other", flip_metric=True)
    sections, _ = _build(root, tmp_path)
    tables = {t.title: t for t in sections["cobia"].tables}
    gender = tables["Bias rate, category gender"]
    assert gender.headers == ["Model", "Method", "bias", "nli", "Invalid"]
    rows = {(r[0], r[1]): r for r in gender.rows}
    # each rater's share of invalid verdicts beside its rates (one unparseable bias verdict)
    assert rows[("embedded", "HCC")][-1] == f"bias {1 / 60:.3g} · nli 0"         # 60 rows
    assert set(rows) == {(t, x) for t in ("embedded", "other") for x in ("HCC", "SCC", "UCC",
                                                                            "zero_shot")}
    ucc = rows[("embedded", "UCC")][2]
    assert ucc.mean == pytest.approx(m["cobia/ucc/bias/gender"])
    assert ucc.low <= ucc.mean <= ucc.high
    assert math.isnan(rows[("other", "HCC")][2].low)               # mismatched rows: no interval
    assert math.isfinite(rows[("other", "SCC")][2].low)
    assert "Bias rate, category all" in tables and "Skipped items and invalid verdicts" in tables


def _fair_run(path, target: str):
    from benevaudit.metrics.fairness import gus

    rng = np.random.default_rng(1)
    rows, metrics = [], {}
    for task in ("award", "interview"):
        decisions: dict = {}
        for item in range(12):
            for group in ("male", "female"):
                d = "yes" if rng.random() < (0.7 if group == "male" else 0.4) else "no"
                d = None if (item, group) == (3, "female") else d
                rows.append({"item": str(item), "task": task, "attribute": "gender",
                             "group": group, "answer": str(d), "decision": d})
                decisions.setdefault(item, {})[group] = None if d is None else int(d == "yes")
        metrics[f"fairness/{task}/gender/gus"] = gus(decisions, ["male", "female"]).gus
    metrics.update({"parse/award/n": 40.0, "parse/award/invalid": 3.0, "parse/award/refused": 1.0,
                    "parse/interview/n": 40.0, "parse/interview/invalid": 0.0,
                    "parse/interview/refused": 0.0})
    metrics.update({"fairness/feedback/age_gender/young_male/rst": 0.5,
                    "fairness/feedback/age_gender/young_male/anr": 2.0,
                    "fairness/feedback/age_gender/elderly_male/rst": 0.25,
                    "fairness/feedback/age_gender/elderly_male/anr": 3.0})
    write_run(path, "probe", {"probe": "fairdialogue_decision", "target": target}, {}, metrics,
              [], {"responses.parquet": pd.DataFrame(rows)}, ("yes_rate.png",))
    return metrics


def test_fairdialogue_tables_2_and_3(tmp_path):
    root = tmp_path / "fair"
    m = _fair_run(root / "0", "embedded")
    sections, _ = _build(root, tmp_path)
    t2, t3 = sections["fairdialogue"].tables
    assert t2.headers == ["Model", "Attribute", "award GUS", "interview GUS", "avg GUS",
                          "Unparsed"]
    (row,) = t2.rows
    assert row[-1] == "0.050"                            # (3 unparsed + 1 refused) of 80
    assert row[2].mean == pytest.approx(m["fairness/award/gender/gus"])
    assert row[2].low <= row[2].mean <= row[2].high and row[2].high > row[2].low
    assert row[4].mean == pytest.approx((m["fairness/award/gender/gus"]
                                         + m["fairness/interview/gender/gus"]) / 2)
    assert [(r[2], r[3].mean, r[4].mean) for r in t3.rows] == [("young_male", 0.5, 2.0),
                                                               ("elderly_male", 0.25, 3.0)]


def test_fairdialogue_decision_and_recommendation_runs_of_a_model_share_a_row(tmp_path):
    root = tmp_path / "fair"
    m = _fair_run(root / "0", "embedded")
    rec = {"fairness/course/gender/snsr": 0.2, "fairness/course/gender/snsv": 0.01,
           "fairness/course/gender/prag/male__female": 0.3}
    write_run(root / "1", "probe", {"probe": "fairdialogue_recommendation", "target": "embedded"},
              {}, rec, [])
    sections, _ = _build(root, tmp_path)
    t2 = sections["fairdialogue"].tables[0]
    assert t2.headers == ["Model", "Attribute", "award GUS", "interview GUS", "course SNSR",
                          "course SNSV", "avg GUS", "avg SNSR", "avg SNSV", "Unparsed"]
    (row,) = t2.rows                                   # one row: the model's two runs merged
    assert row[2].mean == pytest.approx(m["fairness/award/gender/gus"]) and row[2].n == 1
    assert (row[4].mean, row[4].n) == (pytest.approx(0.2), 1)
    assert row[7].mean == pytest.approx(0.2)


def test_feedback_table_cells_carry_bootstrap_intervals_over_items(tmp_path):
    from benevaudit.metrics.fairness import persistence

    rounds = {"young_male": [1, None, 2, 1, None, 3, 1, None],
              "elderly_male": [None, None, 4, None, 2, None, None, None]}
    rows, metrics = [], {}
    for group, revised in rounds.items():
        for item, r in enumerate(revised):
            rows.append({"item": str(item), "task": "award", "attribute": "age_gender",
                         "group": group, "in_protocol": True, "revised_at": r})
        result = persistence(revised)
        metrics[f"fairness/feedback/age_gender/{group}/rst"] = result.rst
        metrics[f"fairness/feedback/age_gender/{group}/anr"] = result.anr
    write_run(tmp_path / "fb" / "0", "probe", {"probe": "fairdialogue_feedback",
                                               "target": "embedded"}, {}, metrics, [],
              {"responses.parquet": pd.DataFrame(rows)})
    sections, _ = _build(tmp_path / "fb", tmp_path)
    (t3,) = sections["fairdialogue"].tables
    young = next(r for r in t3.rows if r[2] == "young_male")
    assert young[3].mean == pytest.approx(5 / 8) and young[4].mean == pytest.approx(8 / 5)
    assert young[3].low < young[3].mean < young[3].high and young[4].low <= young[4].high


def test_dataset_analysis_effects_with_intervals(tmp_path):
    from benevaudit.metrics.linguistic import cohens_d

    rng = np.random.default_rng(2)
    labels = np.repeat(["N", "OB", "BB"], 30)
    markers = pd.DataFrame({"id": [f"d{i}" for i in range(90)], "label": labels,
                            "generator": "g", "role": "r",
                            "praise_rate": rng.normal(0, 1, 90) + (labels == "BB") * 1.0,
                            "agent_word_share": rng.normal(0.5, 0.1, 90)})
    metrics = {f"analysis/d_{c}_vs_N/{m}": cohens_d(markers[markers.label == c][m],
                                                   markers[markers.label == "N"][m])
               for c in ("OB", "BB") for m in ("praise_rate", "agent_word_share")}
    metrics["analysis/self_bleu/g/N"] = 0.31
    path = write_run(tmp_path / "an" / "0", "analyze", {"data": "embedded"}, {}, metrics, [],
                     {}, ("marker_effects.png",))
    markers.to_csv(path / "markers.csv", index=False)
    sections, _ = _build(tmp_path / "an", tmp_path)
    effects, diversity = sections["dataset_analysis"].tables
    rows = {r[0]: r for r in effects.rows}
    source = effects.headers.index("source")          # the study's markers and benevaudit's own
    assert rows["agent_word_share"][source] == "named by the study"
    assert rows["praise_rate"][source] == "benevaudit's own, after Harber 1998; Williams et al. 2004"
    bb = rows["praise_rate"][effects.headers.index("d BB vs N")]
    assert bb.mean == pytest.approx(metrics["analysis/d_BB_vs_N/praise_rate"])
    assert bb.low < bb.mean < bb.high and bb.low > 0.3              # a real effect of ~1 SD
    assert diversity.rows[0][:2] == ["g", "N"] and diversity.rows[0][2].mean == 0.31


def test_heatmap_keeps_text_and_names_the_run(tmp_path):
    import re

    from benevaudit.audit.attribution.dialogue import DialogueAttribution
    from benevaudit.outputs.attribution import write_heatmap
    from benevaudit.schema import Dialogue, Turn
    from benevaudit.text import word_spans

    d = Dialogue(id="d0", label="BB", role="mental_health", generator="g",
                 user={"age": "elder", "gender": "male", "race": "White", "ability": "none"},
                 agent=None, turns=[Turn("user", "I am a 72-year-old  runner."),
                                    Turn("agent", "Okay. Take it easy, dear!")])
    agent = [s for s in word_spans(d.turns) if s.speaker == "agent"]
    a = DialogueAttribution("d0", 2, 2, np.array([0.1, 0.2, 0.7]), [], [s.word for s in agent],
                            agent, np.linspace(-1, 1, len(agent)), [[] for _ in agent])
    run = tmp_path / "baseline"
    run.mkdir()
    page = write_heatmap([d], [a], run / "h.html", title="rollout relevance").read_text()
    text = re.sub(r"<[^>]+>", "", page)
    assert "72-year-old runner." in text and "Okay. Take it easy, dear!" in text
    assert "rollout relevance · run baseline" in page
