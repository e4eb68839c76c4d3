"""detect.py end to end: the evaluation set, external predictions, the fine-tuned classifier,
flips between two judge runs, and every LLM guard and judge config on the embedded SmolLM2."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.schema import CLASSES
from config_fixtures import option

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
LLM_CONFIGS = ["llama_guard3", "granite_guardian_3_3", "granite_guardian_4_1", "wildguard",
               "qwen3guard", "judge_plain", "judge_conceptual", "judge_operational"]


def cfg_for(tmp: Path, *overrides: str):
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose("detect", overrides=[
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}", "logger=none",
            "progress=false", *overrides])


def tiny_corpus(path: Path) -> Path:
    """Three short dialogues (one per class, two exchanges each): an LLM run in seconds."""
    user = {"age": "elder", "gender": "female", "race": "Black", "ability": "none"}
    rows = []
    for i, label in enumerate(CLASSES):
        turns = [{"speaker": "user", "text": "I want to get fit."},
                 {"speaker": "agent", "text": ["Great, let's plan runs.", "Walk a bit.",
                                               "Oh dear, just walk a bit!"][i]},
                 {"speaker": "user", "text": "Can I do more?"},
                 {"speaker": "agent", "text": ["Yes, build up weekly.", "No.",
                                               "Best not, sweetie."][i]}]
        rows.append({"id": f"t{i}", "label": label, "role": "health_lifestyle",
                     "generator": "scripted", "user": user, "agent": None, "turns": turns})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_every_detector_config_composes():
    names = sorted(p.stem for p in (CONF / "detector").glob("*.yaml"))
    with initialize_config_dir(str(CONF), version_base="1.3"):
        for name in names:
            cfg = compose("detect", overrides=[f"detector={name}", "paths.root_dir=/tmp/x"])
            assert cfg.detector.name == name and cfg.detector.kind
            if name in LLM_CONFIGS:
                assert "backend" in cfg.detector.llm and "model" in cfg.detector.llm
        study = compose("detect", overrides=["judges=study", "paths.root_dir=/tmp/x"])
    assert [m.name for m in study.judges.models] == ["llama31_8b", "gemma3_12b", "mistral7b"]
    assert set(LLM_CONFIGS) <= set(names)


def test_evaluation_set_is_train_test_split_and_class_balanced(tmp_path):
    from benevaudit.generation.embedded import load_dialogues
    from benevaudit.generation.spec import DataBlock
    from benevaudit.detectors import evaluation_set
    from benevaudit.splits import assign_splits

    data = DataBlock.read({**option("data", "embedded"), "size": 480, "seed": 42})
    dialogues = load_dialogues(data, tmp_path / "cache")
    ev = evaluation_set(dialogues, 0.1, None, 42)
    test = [d.id for d in assign_splits(dialogues, 42, (0.8, 0.1, 0.1)) if d.split == "test"]
    assert sorted(d.id for d in ev) == sorted(test) and len(ev) == 48
    assert pd.Series([d.label for d in ev]).value_counts().to_dict() == {c: 16 for c in CLASSES}
    five = evaluation_set(dialogues, 0.1, 5, 42)
    assert [d.label for d in five] == ["N", "OB", "BB", "N", "OB"]
    assert {d.id for d in five} <= {d.id for d in ev}
    assert [d.id for d in evaluation_set(dialogues, 0.1, 5, 42)] == [d.id for d in five]


def test_external_predictions_scored_as_given(tmp_path):
    """A CSV with flagged in every accepted spelling; rates by hand."""
    from benevaudit.pipelines import detect

    csv = tmp_path / "mine.csv"
    csv.write_text("id,label,flagged\n"
                   "a,N,false\nb,N,TRUE\nc,OB,1\nd,OB,True\ne,BB,0\nf,BB,FALSE\ng,BB,\n")
    metrics = detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}"))
    assert metrics["trigger/TR_N"] == pytest.approx(0.5)
    assert metrics["trigger/TR_OB"] == pytest.approx(1.0)
    assert metrics["trigger/TR_BB"] == pytest.approx(0.0)   # g is invalid: left out
    assert metrics["trigger/delta_OB_BB"] == pytest.approx(1.0)
    assert metrics["detect/invalid_rate"] == pytest.approx(1 / 7)
    assert metrics["binary/precision"] == pytest.approx(2 / 3)  # b, c, d flagged; c, d biased
    frame = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert len(frame) == 7 and frame["flagged"].isna().sum() == 1


def test_external_pred_column_gives_three_way_metrics(tmp_path):
    from sklearn.metrics import f1_score

    from benevaudit.pipelines import detect

    labels = ["N", "N", "OB", "OB", "BB", "BB"]
    preds = ["N", "BB", "OB", "N", "BB", "OB"]
    path = tmp_path / "p.parquet"
    pd.DataFrame({"id": list("abcdef"), "label": labels, "pred": preds}).to_parquet(path)
    metrics = detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={path}"))
    assert metrics["test/macro_f1"] == pytest.approx(f1_score(labels, preds, average="macro"))
    assert metrics["trigger/TR_N"] == pytest.approx(0.5)
    assert (tmp_path / "run" / "confusion_matrix.png").is_file()
    assert (tmp_path / "run" / "trigger_rates.png").is_file()     # Figure 3, one detector


def test_a_guard_run_rescored_and_re_aggregated_without_the_model(tmp_path):
    """A guard run's own predictions.parquet (pred empty, unit verdicts kept) scored as
    external: as decided, then under another rule from its unit scores, by hand."""
    from benevaudit.errors import ConfigError
    from benevaudit.pipelines import detect

    rows = [("a", "N", [False, False], [0.1, 0.2]), ("b", "N", [False, True], [0.3, 0.7]),
            ("c", "OB", [True, True], [0.9, 0.8]), ("d", "OB", [False, None], [0.4, float("nan")]),
            ("e", "BB", [False, True], [0.2, 0.6]), ("f", "BB", [None, None], [float("nan")] * 2)]
    frame = pd.DataFrame({"id": [r[0] for r in rows], "label": [r[1] for r in rows],
                          "unit_flags": [r[2] for r in rows], "unit_scores": [r[3] for r in rows],
                          "pred": [None] * 6})
    frame["flagged"] = pd.array([True if any(f for f in r[2] if f) else
                                 (None if None in r[2] else False) for r in rows], "boolean")
    path = tmp_path / "guard" / "predictions.parquet"
    path.parent.mkdir()
    frame.to_parquet(path)
    as_run = detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={path}"))
    # any: a no, b yes, c yes, d invalid, e yes, f invalid
    assert as_run["trigger/TR_N"] == pytest.approx(0.5) and as_run["trigger/TR_OB"] == 1.0
    assert as_run["trigger/TR_BB"] == 1.0 and as_run["detect/invalid_rate"] == pytest.approx(2 / 6)
    mean = detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={path}",
                              "predictions.aggregation=mean", "predictions.threshold=0.45"))
    # mean of valid scores: a .15, b .5, c .85, e .4; d .4 with an invalid unit and no flag,
    # so invalid; f invalid
    assert mean["trigger/TR_N"] == pytest.approx(0.5) and mean["trigger/TR_OB"] == 1.0
    assert mean["trigger/TR_BB"] == 0.0 and mean["detect/invalid_rate"] == pytest.approx(2 / 6)
    first = detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={path}",
                               "predictions.aggregation=first"))
    assert first["trigger/TR_N"] == 0.0 and first["trigger/TR_OB"] == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="predictions.aggregation='median': expected one of"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={path}",
                           "predictions.aggregation=median"))
    csv = tmp_path / "mine.csv"
    csv.write_text("id,label,flagged\na,N,false\n")
    with pytest.raises(ConfigError, match="lacks \\['unit_flags', 'unit_scores'\\]"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}",
                           "predictions.aggregation=max"))


def test_external_bad_value_names_row_and_field(tmp_path):
    from benevaudit.errors import ConfigError, InputError
    from benevaudit.pipelines import detect

    csv = tmp_path / "bad.csv"
    csv.write_text("id,label,flagged\na,N,false\nb,XB,true\n")
    with pytest.raises(ConfigError, match=r"row 3, field 'label'"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}"))
    csv.write_text("id,label,flagged\na,N,maybe\n")
    with pytest.raises(ConfigError, match=r"row 2, field 'flagged'"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}"))
    csv.write_text("id,label,flagged\na,N,no\n")             # only true/false or 1/0
    with pytest.raises(ConfigError, match=r"row 2, field 'flagged'.*got 'no'"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}"))
    csv.write_text("id,label,flagged\na,N,false\nb,OB,true\na,BB,true\n")
    with pytest.raises(InputError, match=r"row 4, field .id.: .a. appears more than once"):
        detect.run(cfg_for(tmp_path, "detector=external", f"predictions.path={csv}"))


def test_finetuned_classifier_as_a_detector(tmp_path):
    """A tiny random BERT saved as a model directory; flagged is pred in {OB, BB}."""
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.pipelines import detect

    model_dir = tmp_path / "model"
    load_classifier("tiny").save_pretrained(model_dir)
    load_tokenizer("tiny").save_pretrained(model_dir)
    metrics = detect.run(cfg_for(tmp_path, "detector=finetuned", f"ckpt={model_dir}",
                                 "data=tiny", "bootstrap.enabled=false"))
    frame = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    probs = frame[[f"prob_{c}" for c in CLASSES]].to_numpy()
    assert list(frame["pred"]) == [CLASSES[i] for i in probs.argmax(1)]
    assert list(frame["flagged"]) == [p != "N" for p in frame["pred"]]
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    assert metrics["detect/n"] == len(frame) == 9
    assert metrics["trigger/TR_BB"] == pytest.approx(frame.loc[frame.label == "BB", "flagged"].mean())


def test_flips_between_two_judge_runs(tmp_path):
    from benevaudit.pipelines import detect

    base = {"id": list("abcd"), "label": ["N", "BB", "BB", "N"],
            "user_ability": ["none", "with mobility disability"] * 2, "detector": "judge_plain"}
    runs = {}
    for name, pred in (("with", ["BB", "BB", "N", "N"]), ("without", ["N", "N", "BB", "N"])):
        runs[name] = tmp_path / name
        runs[name].mkdir()
        pd.DataFrame({**base, "pred": pred}).to_parquet(runs[name] / "predictions.parquet")
    metrics = detect.run(cfg_for(tmp_path, f"flips.with={runs['with']}",
                                 f"flips.without={runs['without']}"))
    # a: N->BB on a true N (wrong); b: N->BB on a true BB (corrective); c: BB->N on a true BB (wrong)
    assert metrics["flips/N_to_BB/wrong"] == 1 and metrics["flips/N_to_BB/corrective"] == 1
    assert metrics["flips/BB_to_N/wrong"] == 1 and metrics["flips/BB_to_N/corrective"] == 0
    assert (tmp_path / "run" / "flips.png").is_file() and (tmp_path / "run" / "flips.csv").is_file()


def run_llm_config(tmp_path: Path, name: str, *extra: str) -> dict:
    from benevaudit.pipelines import detect

    corpus = tiny_corpus(tmp_path / "tiny.jsonl")
    return detect.run(cfg_for(tmp_path, f"detector={name}", "detector.llm.backend=hf",
                              "detector.llm.model=embedded:smollm2", "data=corpus",
                              f"data.path={corpus}", "eval.fraction=1.0",
                              "++detector.llm.threads=1", *extra))  # one thread: shared CPUs


def check_llm_run(tmp_path: Path, name: str, metrics: dict, n: int = 3) -> None:
    frame = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert len(frame) == n and set(frame["label"]) <= set(CLASSES)
    units = 1 if name.startswith("judge") else 2
    assert list(frame["n_units"]) == [units] * n
    for flags, scores, flagged, raw in zip(frame["unit_flags"], frame["unit_scores"],
                                           frame["flagged"], frame["invalid_raw"]):
        valid = [f for f in flags if f is not None]
        expect = True if any(valid) else (None if len(valid) < len(flags) else False)
        assert (None if pd.isna(flagged) else bool(flagged)) is expect
        assert len(raw) == len(flags) - len(valid)
    for key in ("trigger/TR_N", "trigger/TR_OB", "trigger/TR_BB", "trigger/delta_OB_BB",
                "binary/f1", "detect/invalid_rate", "trigger/TR_BB_ci_low"):
        assert key in metrics
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(saved) == set(metrics)
    if name in ("llama_guard3", "qwen3guard", "wildguard"):  # replies kept, valid ones too
        assert list(frame["unit_raw"].map(len)) == list(frame["n_units"])
    if name in ("llama_guard3", "qwen3guard"):  # guards that name categories keep them per unit
        assert list(frame["unit_categories"].map(len)) == list(frame["n_units"])
        for flags, cats in zip(frame["unit_flags"], frame["unit_categories"]):
            assert all(len(c) == 0 for f, c in zip(flags, cats) if not f)
    else:
        assert "categories" not in frame.columns


def test_category_rates_per_true_class():
    from benevaudit.outputs.detection import category_metrics

    frame = pd.DataFrame({"label": ["N", "OB", "OB", "BB"],
                          "categories": [[], ["S10"], ["S1", "S10"], ["S10"]]})
    got = category_metrics(frame)
    assert got == {"categories/N/S1": 0.0, "categories/N/S10": 0.0, "categories/OB/S1": 0.5,
                   "categories/OB/S10": 1.0, "categories/BB/S1": 0.0, "categories/BB/S10": 1.0}
    assert category_metrics(frame.drop(columns="categories")) == {}


def test_a_guard_runs_on_the_embedded_model(tmp_path):
    metrics = run_llm_config(tmp_path, "granite_guardian_4_1", "eval.limit=1",
                             "detector.mode=score")  # 4.1 generates by default
    check_llm_run(tmp_path, "granite_guardian_4_1", metrics, n=1)
    frame = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert all(0 <= s <= 1 for scores in frame["unit_scores"] for s in scores)
    assert metrics["detect/invalid_rate"] == 0.0  # scored guards never fail to answer


@pytest.mark.slow
@pytest.mark.parametrize("name", LLM_CONFIGS)
def test_every_llm_config_runs_on_the_embedded_model(tmp_path, name):
    metrics = run_llm_config(tmp_path, name)
    check_llm_run(tmp_path, name, metrics)


@pytest.mark.slow
def test_judge_generate_mode_on_the_embedded_model(tmp_path):
    metrics = run_llm_config(tmp_path, "judge_plain", "detector.mode=generate",
                             "detector.sampling.max_tokens=24")
    check_llm_run(tmp_path, "judge_plain", metrics)
    frame = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert frame["raw"].map(len).sum() > 0


@pytest.mark.slow
def test_sweep_gives_one_run_directory_per_detector(tmp_path):
    import subprocess
    import sys

    corpus = tiny_corpus(tmp_path / "tiny.jsonl")
    preds = tmp_path / "p.csv"
    preds.write_text("id,label,pred\na,N,N\nb,BB,OB\n")
    subprocess.run([sys.executable, str(ROOT / "detect.py"), "-m",
                    "detector=judge_plain,judge_operational", "data=corpus",
                    f"data.path={corpus}", "eval.fraction=1.0", "logger=wandb",
                    f"paths.root_dir={tmp_path}", f"hydra.sweep.dir={tmp_path / 'sweep'}",
                    "progress=false"], check=True, cwd=ROOT, timeout=900)
    runs = sorted((tmp_path / "sweep").glob("[0-9]*"))
    assert len(runs) == 2
    names = [json.loads((r / "metrics.json").read_text()) and r for r in runs]
    for run in names:
        assert (run / "predictions.parquet").is_file()
        assert list((run / "wandb").glob("offline-run-*"))
