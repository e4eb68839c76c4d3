"""``benevaudit/detection -T scorer=detector`` (``make test-inspect``): a benevaudit detector,
not the model under test, scores each sample's transcript. On the corpus's dialogues its
metrics equal ``detect.py``'s on the same evaluation set; under ``generate`` it decides the
model's reply. Offline, on Inspect's mock model and a tiny random-weight classifier saved as
the fine-tuned detector's checkpoint. The tests need inspect-ai (``.venv-inspect``).
"""

from __future__ import annotations

from importlib.util import find_spec

import pandas as pd
import pytest
from test_inspect import compose_run, inspect_eval, mock_model
from test_inspect_studies import equal_metrics

from benevaudit.schema import CLASSES

pytestmark = [pytest.mark.inspect,
              pytest.mark.skipif(find_spec("inspect_ai") is None,
                                 reason="inspect tier: needs inspect-ai (make test-inspect)")]

TIMINGS = {"detect/seconds", "detect/seconds_per_dialogue"}     # detect.py's own clock


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny random BERT saved as a model directory (``detector=finetuned ckpt=<dir>``)."""
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    model_dir = tmp_path_factory.mktemp("ckpt") / "model"
    load_classifier("tiny").save_pretrained(model_dir)
    load_tokenizer("tiny").save_pretrained(model_dir)
    return model_dir


def test_a_detector_scores_the_corpus_as_detect_py_does(tmp_path, checkpoint):
    from benevaudit.pipelines import detect

    model, calls = mock_model(lambda messages: "never asked")
    log = inspect_eval("benevaudit/detection", model, tmp_path / "logs", data="tiny",
                       detector="finetuned", scorer="detector",
                       options=f"ckpt={checkpoint},bootstrap.enabled=false")
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    metrics = detect.run(compose_run("detect", tmp_path, "detect", "data=tiny",
                                     "detector=finetuned", f"ckpt={checkpoint}",
                                     "bootstrap.enabled=false"))
    assert not calls and len(log.samples) == metrics["detect/n"] == 9    # the model is not asked
    assert set(shown) == set(metrics) - TIMINGS
    equal_metrics(shown, metrics)
    frame = pd.read_parquet(tmp_path / "detect" / "predictions.parquet")
    rows = {s.id: s.scores["benevaudit/detector"].metadata["row"] for s in log.samples}
    for _, expected in frame.iterrows():                          # dialogue by dialogue
        row = rows[expected["id"]]
        assert (row["pred"], row["flagged"]) == (expected["pred"], expected["flagged"])
        assert [row[f"prob_{c}"] for c in CLASSES] == pytest.approx(
            [expected[f"prob_{c}"] for c in CLASSES], abs=1e-6)
    assert "test/macro_f1" in shown and "trigger/TR_BB" in shown


def test_under_generate_the_detector_decides_the_models_reply(tmp_path, checkpoint):
    from benevaudit.llm.base import request_seed

    model, calls = mock_model(lambda messages: f"a reply after {len(messages)} messages")
    log = inspect_eval("benevaudit/detection", model, tmp_path / "logs", data="tiny",
                       detector="finetuned", scorer="detector", generate=True,
                       options=f"ckpt={checkpoint}")
    assert len(calls) == len(log.samples) == 9
    for messages, config in calls:                    # the context: up to its last user turn
        assert messages[-1]["role"] == "user" and config.seed == request_seed(messages, 42)
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert shown["detect/n_unlabelled"] == 9 and shown["detect/n"] == 0
    flagged = [s.scores["benevaudit/detector"].metadata["biased"] for s in log.samples]
    assert shown["detect/generated_flagged_rate"] == pytest.approx(sum(flagged) / len(flagged))
    assert shown["detect/generated_invalid_rate"] == 0.0
    for sample in log.samples:                        # the transcript ends with the reply
        assert sample.scores["benevaudit/detector"].answer == sample.output.completion
        assert sample.output.completion.startswith("a reply after")


def test_the_detector_scorer_refuses_what_it_cannot_score(tmp_path):
    from benevaudit.inspect_tasks.detection import detection

    with pytest.raises(ValueError, match="generate=true needs scorer=detector"):
        detection(data="tiny", generate=True)
    with pytest.raises(ValueError, match=r"scorer=judge; expected one of"):
        detection(data="tiny", scorer="judge")
    with pytest.raises(ValueError, match="detector=external reads its predictions"):
        csv = tmp_path / "p.csv"
        csv.write_text("id,label,flagged\na,N,true\n")
        detection(data="tiny", detector="external", scorer="detector",
                  options=f"predictions.path={csv}")


def test_an_llm_judge_detector_scores_the_corpus_as_detect_py_does(tmp_path):
    """A judge detector on a scripted LLM as the scorer: the same verdicts, in the same order,
    as ``detect.py`` gets from the same replies, so the metrics are equal."""
    from benevaudit.pipelines import detect

    said = ["+detector.llm.responses=[N,BB,OB,BB,hmm,N,OB,BB,N]"]
    chosen = ["detector=judge_plain", "detector.mode=generate", "detector.llm.backend=scripted",
              *said]
    model, calls = mock_model(lambda messages: "never asked")
    log = inspect_eval("benevaudit/detection", model, tmp_path / "logs", data="tiny",
                       detector="judge_plain", scorer="detector",
                       options=[*chosen[1:], "bootstrap.enabled=false"])
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    metrics = detect.run(compose_run("detect", tmp_path, "detect", "data=tiny", *chosen,
                                     "bootstrap.enabled=false"))
    assert not calls and len(log.samples) == metrics["detect/n"] == 9
    judged = {k: v for k, v in metrics.items() if not k.startswith("llm/")}  # detect.py's calls
    assert set(shown) == set(judged) - TIMINGS and shown["detect/n_invalid"] == 1
    equal_metrics(shown, judged)
    frame = pd.read_parquet(tmp_path / "detect" / "predictions.parquet")
    rows = {s.id: s.scores["benevaudit/detector"].metadata["row"] for s in log.samples}
    assert [rows[i]["pred"] for i in frame["id"]] == [None if pd.isna(p) else p
                                                      for p in frame["pred"]]


def test_the_inspect_command_line_runs_a_task_by_its_registered_name(tmp_path, checkpoint):
    """``inspect eval benevaudit/detection`` as a user types it: the package's entry point
    registers the task, and ``--model none`` runs offline (the detector scores, no model)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from inspect_ai.log import list_eval_logs, read_eval_log

    inspect = shutil.which("inspect", path=str(Path(sys.executable).parent))
    assert inspect is not None, "inspect-ai installs an `inspect` command beside python"
    done = subprocess.run(
        [inspect, "eval", "benevaudit/detection", "--model", "none", "--log-dir",
         str(tmp_path / "logs"), "--display", "none", "-T", "scorer=detector",
         "-T", "detector=finetuned", "-T", "data=tiny",
         "-T", f"options=ckpt={checkpoint},bootstrap.enabled=false"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    shown = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert log.status == "success" and len(log.samples) == shown["detect/n"] == 9
