"""The report reads what ran from run.json: one typed record, older runs migrated in one place,
and every row and figure of a run that stood in for the study's model or data marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benevaudit.outputs.run_record import run_record, write_run_record
from benevaudit.pipelines.report_files import build_report
from benevaudit.report.record import FROM_HYDRA, migrate, read_record
from benevaudit.report.runs import read_run
from benevaudit.report.stand_ins import MARK, stand_ins
from report_fixtures import write_run

GUARD = {"name": "llama_guard3", "kind": "llama_guard3",
         "checkpoint": "meta-llama/Llama-Guard-3-8B"}
METRICS = {"binary/f1": 0.5, "trigger/TR_N": 0.25, "trigger/TR_OB": 0.5, "trigger/TR_BB": 0.5,
           "trigger/delta_OB_BB": 0.0, "detect/invalid_rate": 0.125}


def recorded(path: Path, entrypoint: str, config: dict, choices: dict[str, str]) -> Path:
    """A run directory with its .hydra files, metrics and the run.json every entrypoint writes."""
    write_run(path, entrypoint, choices, config=config, metrics=METRICS)
    write_run_record(path, run_record(entrypoint, {"task_name": entrypoint, **config}, choices,
                                      "2026-01-01T00:00:00+00:00", "2026-01-01T00:01:00+00:00",
                                      "complete"))
    return path


def test_a_record_of_every_version_reads_as_the_current_one(tmp_path) -> None:
    path = recorded(tmp_path / "run", "detect", {"detector": GUARD}, {"detector": "x"})
    record = read_record(path)
    assert record is not None and record.entrypoint == "detect" and not record.notes
    assert record.choices == {"detector": "x"} and record.machine.cpu
    assert "torch" in record.versions and record.ended.startswith("2026-01-01T00:01")
    newer = migrate({**json.loads((path / "run.json").read_text()), "schema_version": 99})
    assert newer.entrypoint == "detect" and "newer" in newer.notes[0]
    assert migrate({"choices": "torn", "machine": 3}).choices == {}
    (path / "run.json").write_text("{\"schema")
    with pytest.raises(ValueError, match="run.json: half written"):
        read_record(path)


def test_a_run_without_run_json_is_read_from_its_hydra_files(tmp_path) -> None:
    path = write_run(tmp_path / "old", "train", {"model": "tiny_bert"},
                     config={"model": {"source": "tiny"}}, metrics={"test/macro_f1": 0.5})
    run = read_run(path, "old")
    assert run.record is not None and run.record.schema_version == FROM_HYDRA
    assert stand_ins(run.record) == ["a tiny random-weight BERT in place of bert-base-uncased"]


@pytest.mark.parametrize(("llm", "expected"), [
    ({"backend": "hf", "model": "embedded:smollm2"},
     ["the embedded SmolLM2-135M in place of meta-llama/Llama-Guard-3-8B"]),
    ({"backend": "scripted", "model": None},
     ["a scripted LLM in place of meta-llama/Llama-Guard-3-8B"]),
    ({"backend": "vllm", "model": "meta-llama/Llama-Guard-3-8B"}, []),
])
def test_a_guard_on_the_embedded_llm_is_named_a_stand_in(tmp_path, llm, expected) -> None:
    path = recorded(tmp_path / "run", "detect", {"detector": {**GUARD, "llm": llm}}, {})
    assert stand_ins(read_record(path)) == expected


def test_a_finetuned_detector_is_what_its_training_run_trained(tmp_path) -> None:
    trained = recorded(tmp_path / "train", "train",
                       {"model": {"source": "packaged:minilm"}, "data": {"kind": "corpus"}}, {})
    detect = {"detector": {"name": "finetuned", "kind": "finetuned"},
              "ckpt": str(trained / "checkpoints" / "best.ckpt")}
    path = recorded(tmp_path / "detect", "detect", detect, {})
    assert stand_ins(read_record(path)) == [
        "the packaged minilm encoder in place of bert-base-uncased"]
    real = recorded(tmp_path / "train_real", "train", {"model": {"source": "bert-base-uncased"},
                                                       "data": {"kind": "corpus"}}, {})
    path = recorded(tmp_path / "detect_real", "detect", {**detect, "ckpt": str(real)}, {})
    assert stand_ins(read_record(path)) == []


def test_the_report_says_what_ran_and_marks_each_stand_in_row(tmp_path) -> None:
    root = tmp_path / "runs"
    recorded(root / "embedded", "detect",
             {"detector": {**GUARD, "llm": {"backend": "hf", "model": "embedded:smollm2"}}},
             {"detector": "llama_guard3"})
    recorded(root / "real", "detect",
             {"detector": {**GUARD, "name": "wildguard", "checkpoint": "allenai/wildguard",
                           "llm": {"backend": "vllm", "model": "allenai/wildguard"}}},
             {"detector": "wildguard"})
    md = build_report([root], tmp_path / "report", n_resamples=0).markdown.read_text()
    what_ran = md.split("## What ran")[1].split("\n## ")[0]
    assert "in place of meta-llama/Llama-Guard-3-8B" in what_ran
    assert f"| llama_guard3 {MARK} |" in md and "| wildguard |" in md
    detection = md.split("Table 3: binary detection")[1]
    assert "| Invalid |" in detection.splitlines()[2] and "0.125" in detection


def test_settings_are_read_once_typed_with_older_runs_filled_in(tmp_path) -> None:
    """The report's one typed reader: an older config's gaps are filled in one place, and a
    run's run.json (what ran) wins over its .hydra/ config (what was composed)."""
    from benevaudit.report.record import settings_of
    from benevaudit.report.runs import read_run

    old = settings_of({"seed": 3, "probe": {"kind": "recommendation", "k": 10}})
    assert (old.probe_mode, old.prag_normalise, old.k, old.seed) == ("text", "printed", 10, 3)
    assert old.wer_strata == () and old.data_kind is None and old.names == {}
    path = write_run(tmp_path / "e", "evaluate", {"data": "embedded"},
                     {"data": {"kind": "embedded"}, "seed": 1}, {"test/macro_f1": 0.5})
    (path / "run.json").write_text(json.dumps({
        "schema_version": 2, "entrypoint": "evaluate", "config": {
            "seed": 7, "data": {"kind": "corpus"}, "target": {"name": "m1"}},
        "adopted": {"from": "/runs/train", "keys": ["data", "seed"]}}))
    run = read_run(path, "e")
    assert (run.seed, run.settings.data_kind, run.chosen("target")) == (7, "corpus", "m1")
    assert run.record is not None and run.record.adopted == ("data", "seed")


def test_what_a_run_settled_as_it_ran_is_read_from_run_json_and_older_metrics(tmp_path) -> None:
    """Schema 3 records ``ran`` (the stand-in, where the replies came from); an older run kept
    it as floats in metrics.json, and the reader takes it from there, in one place."""
    config = {"probe": {"family": "fairmt", "data": {"set": "10k"}, "judge_prompt": "paper",
                        "judge_turns": "fifth", "answers": {"path": None}}}
    old = write_run(tmp_path / "old", "probe", {"probe": "fairmt"}, config,
                    {"fairmt/stand_in": 1.0, "fairmt/answers": 0.0, "fairmt/mean/bias_rate": 0.5})
    run = read_run(old, "old")
    assert run.record is not None and run.record.ran == {"stand_in": True}
    assert (run.settings.stand_in, run.settings.answers_from) == (True, None)
    (old / "run.json").write_text(json.dumps({"schema_version": 2, "entrypoint": "probe",
                                               "config": {"task_name": "probe", **config}}))
    run = read_run(old, "old")
    assert run.record is not None and run.record.schema_version == 2 and run.settings.stand_in
    new = write_run(tmp_path / "new", "probe", {"probe": "fairmt"}, config,
                    {"fairmt/mean/bias_rate": 0.5})
    write_run_record(new, run_record("probe", {"task_name": "probe", **config}, {}, "", "",
                                     "complete", ran={"stand_in": False, "answers": "/logs"}))
    settings = read_run(new, "new").settings
    assert (settings.stand_in, settings.answers_from) == (False, "/logs")
    assert (settings.data_set, settings.judge_prompt, settings.judge_turns) == (
        "10k", "paper", "fifth")
