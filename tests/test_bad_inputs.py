"""Every file and number a user passes fails cleanly: one line naming the input, exit code 2.

Each entrypoint's matrix runs ``pipelines.<name>.run`` in-process through Hydra's compose API
and ``pipelines.cli.guarded``, as the entrypoint scripts do. A tripwire makes loading a model
(classifier, tokenizer, frozen checkpoint, LLM, Vendi encoder) fail the test, so every bad
input is shown to be caught before any model work. The path matrix crosses every option that
names a file with each kind of bad file its format admits (missing, empty, random bytes, not
UTF-8, another format, wrong columns or shape); run directories (a training run's config and
model, a run named for a report, an out_dir to resume, decision runs for feedback) are spoiled one
file at a time. Three cases run the real scripts as subprocesses, to show that no traceback
reaches the terminal.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from benevaudit.corpus import read_corpus, write_jsonl
from benevaudit.generation.embedded import ensure_scripted_sample
from benevaudit.pipelines.cli import guarded
from benevaudit.pipelines.config import plain

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bad (and a few good) files of every kind a user passes."""
    d = tmp_path_factory.mktemp("inputs")
    out: dict[str, Path] = {}

    def put(name: str, text: str) -> None:
        out[name.replace(".", "_")] = d / name
        (d / name).write_text(text)

    put("text.ckpt", "these are notes, not weights\n")
    put("empty.ckpt", "")
    with zipfile.ZipFile(d / "other.ckpt", "w") as zf:
        zf.writestr("readme.txt", "a zip, but not torch.save's")
    out["other_ckpt"] = d / "other.ckpt"
    for name, files_in in {"broken_config": {"config.json": '{"model_type": "be'},
                           "no_weights": {"config.json": '{"model_type": "bert"}',
                                          "vocab.txt": "[PAD]\n"},
                           "model": {"config.json": '{"model_type": "bert"}',
                                     "model.safetensors": "", "vocab.txt": "[PAD]\n"}}.items():
        (d / name).mkdir()
        for f, text in files_in.items():
            (d / name / f).write_text(text)
        out[name] = d / name
    put("truncated.json", '{"N": [{"word": "calm", "sco')
    put("notalist.json", json.dumps({"N": "notalist"}))
    put("list.json", "[1, 2]")
    put("badclass.json", json.dumps({"XX": []}))
    put("badentry.json", json.dumps({"N": [{"word": "", "score": 1}]}))
    put("lexicon.json", json.dumps({c: [{"word": "dear", "score": 1.0}]
                                    for c in ("N", "OB", "BB")}))
    corpus = read_corpus(ensure_scripted_sample(d / "cache", size=9, seed=1))
    out["corpus"] = write_jsonl(corpus, d / "corpus.jsonl")
    first = (d / "corpus.jsonl").read_text().splitlines()[0]
    put("torn.jsonl", first + "\n" + first[: len(first) // 2] + "\n")
    put("nocols.csv", "id,label\nx,N\n")
    put("badlabel.csv", f"id,human_label\n{corpus[0].id},maybe\n")
    put("unknownid.csv", "id,human_label\nnot-in-corpus,N\n")
    out["binary_csv"] = d / "binary.csv"
    out["binary_csv"].write_bytes(RANDOM)
    out["predictions"] = d / "predictions.parquet"
    out["predictions"].write_bytes(parquet_bytes(DETECTED))
    return out


@pytest.fixture(autouse=True)
def no_model_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading any model fails the test: bad inputs must be caught before."""
    def tripwire(*args: object, **kwargs: object) -> None:
        raise AssertionError("model work began before the bad input was caught")

    import importlib

    targets = ("benevaudit.encoders.models.load_classifier",
               "benevaudit.encoders.models.load_tokenizer",
               "benevaudit.audit.checkpoints.load_frozen",
               "benevaudit.pipelines.frozen.load_frozen",
               "benevaudit.analysis.diversity.cls_embeddings",
               "benevaudit.llm.build_from_block", "benevaudit.llm.build_chat_model")
    # every module of the package first: one imported for the first time while a tripwire is
    # set would bind it with `from ... import` for the rest of the session, past this test
    import pkgutil

    import benevaudit

    for info in pkgutil.walk_packages(benevaudit.__path__, "benevaudit."):
        importlib.import_module(info.name)
    for target in targets:
        importlib.import_module(target.rsplit(".", 1)[0])
    for target in targets:
        monkeypatch.setattr(target, tripwire)


def configure(name: str, tmp: Path, overrides: list[str]) -> DictConfig:
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(name, overrides=[f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
                                        *overrides])


def fails_cleanly(name: str, tmp: Path, overrides: list[str], files: dict[str, Path],
                  capsys: pytest.CaptureFixture) -> str:
    """Run entrypoint ``name`` as its script does; return the one line it printed."""
    import importlib

    overrides = [o.format(**files) for o in overrides]
    cfg = configure(name, tmp, overrides)
    run = importlib.import_module(f"benevaudit.pipelines.{name}").run
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        guarded(run, cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


TRAIN = [
    (["optim.lr=-1"], "optim.lr=-1: expected a number > 0"),
    (["optim.lr=fast"], "optim.lr='fast': expected a number > 0"),
    (["optim.weight_decay=-0.1"], "optim.weight_decay=-0.1: expected a number >= 0"),
    (["optim.warmup_ratio=1.5"], "optim.warmup_ratio=1.5: expected a number in [0, 1)"),
    (["trainer.max_epochs=0"], "trainer.max_epochs=0: expected a positive integer"),
    (["trainer.accumulate_grad_batches=0"],
     "trainer.accumulate_grad_batches=0: expected a positive integer"),
    (["trainer.gradient_clip_val=-1"], "trainer.gradient_clip_val=-1"),
    (["loader.batch_size=0"], "loader.batch_size=0: expected a positive integer"),
    (["loader.eval_batch_size=2.5"], "loader.eval_batch_size=2.5: expected a positive integer"),
    (["loader.num_workers=-1"], "loader.num_workers=-1: expected a non-negative integer"),
    (["model.max_length=2"], "model.max_length=2: expected an integer in [3, 512]"),
    (["model.max_length=4096"], "model.max_length=4096: expected an integer in [3, 512]"),
    (["model.head_tokens=600"], "model.head_tokens=600: expected at most model.max_length - 2"),
    (["split.ratios=[0.8,0.2]"], "split.ratios=[0.8, 0.2]: expected three numbers in [0, 1]"),
    (["data.size=0"], "data.size=0: expected an integer"),
    (["data.signal=2"], "data.signal=2: expected a number in [0, 1]"),
    (["data.planted_cues=[{{token: zz, label: BB, rate: 7}}]"],
     "data.planted_cues[0]: PlantedCue.rate must be in [0, 1], got 7"),
    (["seed=-1"], "seed=-1: expected a non-negative integer"),
    (["attribution.top_k=0"], "attribution.top_k=0: expected a positive integer"),
    (["attribution.methods=[magic]"], "attribution.methods=['magic']: expected a non-empty list "
                                      "of rollout, rollout_norm, integrated_gradients"),
    (["attribution.faithfulness_dialogues=-1"], "attribution.faithfulness_dialogues=-1"),
    (["data=corpus"], "data.path is required with data=corpus"),
    (["data=corpus", "data.path=/no/such/corpus.jsonl"],
     "data.path=/no/such/corpus.jsonl: no such file or directory"),
    (["data=corpus", "data.path={torn_jsonl}"], "torn.jsonl:line 2: malformed JSON"),
    (["resume={text_ckpt}"], "resume=", "not a PyTorch checkpoint"),
    (["resume=/no/such/last.ckpt"], "resume=/no/such/last.ckpt: no checkpoint"),
    (["intervention=mask"], "needs a cue lexicon: pass lexicon.path="),
    (["intervention=mask", "intervention.steps.mask.k=-3", "lexicon.path={lexicon_json}"],
     "intervention.steps.mask.k=-3: expected a positive integer or null"),
    (["intervention=mask", "lexicon.path={truncated_json}"], "truncated.json: not a cue lexicon"),
]


@pytest.mark.parametrize("case", TRAIN, ids=[" ".join(c[0]) or "defaults" for c in TRAIN])
def test_train(case: tuple, files, tmp_path, capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly("train", tmp_path, ["experiment=smoke", *overrides], files, capsys)
    assert all(e in line for e in expected), line


EVALUATE = [
    ([], "ckpt is required: ckpt=<a train run directory"),
    (["ckpt={text_ckpt}"], "text.ckpt: not a PyTorch checkpoint"),
    (["ckpt={empty_ckpt}"], "empty.ckpt: the file is empty"),
    (["ckpt={other_ckpt}"], "other.ckpt: a zip archive without data.pkl"),
    (["ckpt=/no/such/run"], "ckpt=/no/such/run: no such file or directory"),
    (["ckpt={broken_config}"], "config.json:line 1: not valid JSON"),
    (["ckpt={no_weights}"], "has config.json but no weights"),
    (["ckpt={model}", "lexicon.path={truncated_json}"], "truncated.json: not a cue lexicon"),
    (["ckpt={model}", "lexicon.path={notalist_json}"],
     "notalist.json: class 'N': expected a list of {word, score}, got str"),
    (["ckpt={model}", "lexicon.path={list_json}"], "list.json: expected an object"),
    (["ckpt={model}", "lexicon.path={badclass_json}"], "unknown class 'XX'"),
    (["ckpt={model}", "lexicon.path={badentry_json}"], "class 'N', entry 0: expected"),
    (["ckpt={model}", "lexicon.path=/no/such/lexicon.json"], "no cue lexicon here"),
    (["ckpt={model}", "eval_split=dev"], "eval_split='dev': expected one of"),
    (["ckpt={model}", "loader.eval_batch_size=0"], "loader.eval_batch_size=0"),
    (["ckpt={model}", "intervention=random_mask"], "needs a cue lexicon"),
]


@pytest.mark.parametrize("case", EVALUATE, ids=[" ".join(c[0]) or "defaults" for c in EVALUATE])
def test_evaluate(case: tuple, files, tmp_path, capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly("evaluate", tmp_path, ["data=tiny", *overrides], files, capsys)
    assert all(e in line for e in expected), line


ATTRIBUTE = [
    (["ckpt={text_ckpt}"], "ckpt=", "not a PyTorch checkpoint"),
    (["ckpt={no_weights}"], "no weights"),
    (["ckpt={model}", "attribution.methods=[magic]"], "attribution.methods=['magic']: expected"),
    (["ckpt={model}", "attribution.batch_size=0"], "attribution.batch_size=0: expected a positive integer"),
    (["ckpt={model}", "attribution.heatmap_dialogues=-2"], "attribution.heatmap_dialogues=-2"),
    (["ckpt={model}", "attribution.target=everyone"],
     "attribution.target='everyone': expected one of ['true', 'predicted', 'N', 'OB', 'BB']"),
    (["ckpt={model}", "model.max_length=1"], "model.max_length=1"),
]


@pytest.mark.parametrize("case", ATTRIBUTE, ids=[" ".join(c[0]) or "defaults" for c in ATTRIBUTE])
def test_attribute(case: tuple, files, tmp_path, capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly("attribute", tmp_path, ["data=tiny", *overrides], files, capsys)
    assert all(e in line for e in expected), line


ANALYZE = [
    (["data.path=/no/such/corpus"], "data.path=/no/such/corpus: no such file or directory"),
    (["data.path={torn_jsonl}"], "torn.jsonl:line 2: malformed JSON"),
    (["annotation.labels_path=/no/such.csv"], "annotation.labels_path=/no/such.csv: no such file"),
    (["annotation.labels_path={nocols_csv}"], "nocols.csv: missing column(s) ['human_label']"),
    (["annotation.labels_path={badlabel_csv}"], "badlabel.csv:2: field 'human_label'"),
    (["annotation.labels_path={unknownid_csv}"], "1 id(s) are not in the corpus"),
    (["mtld.threshold=1.5"], "mtld.threshold=1.5: expected a number in (0, 1)"),
    (["self_bleu.n_seeds=0"], "self_bleu.n_seeds=0: expected a positive integer"),
    (["vendi.batch_size=0"], "vendi.batch_size=0"),
    (["vendi.max_per_cell=-5"], "vendi.max_per_cell=-5"),
    (["vendi.embedder={broken_config}"], "vendi.embedder", "config.json:line 1: not valid JSON"),
    (["vendi.device=tpu"], "vendi.device='tpu': expected one of ['auto', 'cpu', 'cuda']"),
    (["mtld.speaker=bot"], "mtld.speaker='bot': expected one of ['all', 'agent', 'user']"),
    (["markers.reference=X"], "markers.reference='X': expected one of ['N', 'OB', 'BB']"),
    (["annotation.n_per_class=0"], "annotation.n_per_class=0"),
]


@pytest.mark.parametrize("case", ANALYZE, ids=[" ".join(c[0]) or "defaults" for c in ANALYZE])
def test_analyze(case: tuple, files, tmp_path, capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly("analyze", tmp_path, ["data.path={corpus}", "progress=false",
                                               *overrides], files, capsys)
    assert all(e in line for e in expected), line


GENERATE = [
    (["limit=0"], "limit=0: expected a positive integer or null"),
    (["max_retries=-1"], "max_retries=-1: expected a non-negative integer"),
    (["batch_size=0"], "batch_size=0"),
    (["shard_size=0"], "shard_size=0"),
    (["min_turns=0"], "min_turns=0"),
    (["generator.signal=1.5"], "generator.signal=1.5: expected a number in [0, 1]"),
    (["generator.planted_cues=[{{token: zz, label: XX, rate: 0.5}}]"],
     "generator.planted_cues[0]: PlantedCue.label must be one of"),
    (["generator.planted_cues=[zz]"], "generator.planted_cues[0]='zz'"),
    (["filters.role=legal"], "filters.role: unknown value(s)"),
    (["generator=smollm2", "generator.sampling.temperature=-1"], "sampling.temperature=-1"),
    (["generator=smollm2", "generator.sampling.top_p=0"], "generator.sampling.top_p=0"),
    (["generator=smollm2", "generator.sampling.max_tokens=0"], "sampling.max_tokens=0"),
    (["generator=smollm2", "generator.llm.batch_size=0"], "generator.llm.batch_size=0"),
    (["generator=smollm2", "generator.llm.backend=nope"], "generator.llm.backend='nope'"),
    (["generator=smollm2", "generator.llm.model=/no/such/model"], "no such directory"),
    (["generator=smollm2", "generator.llm.model=nobody/no-such-model"],
     "not in the Hugging Face cache"),
    (["generator=smollm2", "generator.llm.chat_template=/no/such/template.jinja"],
     "no such template file"),
    (["generator=smollm2", "generator.exchanges=[0]"], "generator.exchanges=[0]"),
    (["generator=smollm2", "generator.mode=chatty"], "generator.mode='chatty': expected one of"),
]


@pytest.mark.parametrize("case", GENERATE, ids=[" ".join(c[0]) or "defaults" for c in GENERATE])
def test_generate(case: tuple, files, tmp_path, capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly("generate", tmp_path, [f"out_dir={tmp_path / 'corpus'}",
                                                "progress=false", *overrides], files, capsys)
    assert all(e in line for e in expected), line


DETECT = [
    (["eval.limit=0"], "eval.limit=0: expected a positive integer or null"),
    (["eval.fraction=0"], "eval.fraction=0: expected a number in (0, 1]"),
    (["detector.demographics=nope"], "detector.demographics='nope': expected true or false"),
    (["detector=granite_guardian_4_1", "detector.threshold=abc"],
     "detector.threshold='abc': expected a number in [0, 1]"),
    (["detector.sampling.max_tokens=0"], "detector.sampling.max_tokens=0"),
    (["bootstrap.n_resamples=0"], "bootstrap.n_resamples=0: expected a positive integer"),
    (["bootstrap.fractions=[0,0.1]"], "bootstrap.fractions=[0, 0.1]: expected a non-empty list"),
    (["bootstrap.enabled=sometimes"], "bootstrap.enabled='sometimes': expected true or false"),
    (["data=corpus", "data.path=/no/such.jsonl"], "data.path=/no/such.jsonl: no such file"),
    (["data=corpus", "data.path={torn_jsonl}"], "torn.jsonl:line 2"),
    (["detector=finetuned"], "detector=finetuned needs ckpt="),
    (["detector=finetuned", "ckpt={text_ckpt}"], "ckpt=", "not a PyTorch checkpoint"),
    (["detector=finetuned", "ckpt=/no/such/run"], "ckpt=/no/such/run: no such file"),
    (["detector=external"], "detector=external needs predictions.path="),
    (["detector=external", "predictions.path={nocols_csv}"],
     "nocols.csv: needs columns id, label and pred or flagged"),
    (["flips.with=/no/such", "flips.without=/no/such2"], "flips.with=/no/such: no predictions"),
    (["flips.with=/no/such"], "flips needs both flips.with="),
]


# CoBia without probe.data.path reads the project's stand-in: its checks run on that, too
PROBE = [
    (["limit=0"], "limit=0: expected a positive integer or null"),
    (["probe=cobia_hcc", "probe.data.one_descriptor=random"],
     "probe.data.one_descriptor='random': expected one of"),
    (["probe=cobia_hcc", "probe.data.path=/no/such"], "probe.data.path: '/no/such' is not a dir"),
    (["probe=cobia_hcc", "probe.data.path={lexicon_json}"], "is not a directory"),
    (["probe=cobia_hcc", "probe.sentences=0"], "probe.sentences=0"),
    (["probe=cobia_hcc", "probe.max_tokens=0"], "probe.max_tokens=0"),
    (["probe=cobia_hcc", "probe.switches.index=maybe"], "probe.switches.index='maybe'"),
    (["probe=cobia", "probe.dan_template=/no/such.txt"], "probe.dan_template: no file"),
    (["probe=cobia", "probe.human_labels={nocols_csv}"],
     "expected columns id, method and at least one annotator"),
    (["probe=cobia", "probe.human_labels=/no/such.csv"], "probe.human_labels: no file"),
    (["probe=fairdialogue_recommendation", "probe.k=0"], "probe.k=0: expected a positive integer"),
    (["probe=fairdialogue_recommendation", "probe.sampling.max_tokens=lots"],
     "probe.sampling.max_tokens='lots': expected a positive integer or auto"),
    (["probe=fairdialogue_decision", "probe.answers.path={nocols_csv}"], "missing column(s)"),
    (["probe=fairdialogue_decision", "probe.answers.path=/no/such.csv"], "probe.answers.path: no"),
    (["probe=fairdialogue_decision", "probe.text_style=shout"], "probe.text_style='shout': expected one of"),
    (["probe=fairdialogue_decision", "probe.mode=video"], "probe.mode='video': expected one of"),
    (["probe=fairdialogue_decision", "probe.neutral=perhaps"], "probe.neutral='perhaps'"),
    (["probe=fairdialogue_feedback", "probe.rounds=0"], "probe.rounds=0"),
    (["probe=fairdialogue_decision", "probe.mode=audio"],
     "probe.mode=audio needs a target that hears audio", "target 'embedded' does not",
     "Audio-capable targets: gemini_25_flash_lite, gpt4o_audio, qwen25_omni_7b"),
    (["probe=fairdialogue_decision", "asr=whisper_large_v3", "asr.model=null"],
     "asr.model: asr=whisper needs a hub id"),
    (["probe=fairdialogue_decision", "asr=whisper_large_v3", "asr.model=/no/such"],
     "asr.model=/no/such: no Whisper checkpoint there"),
    (["probe=fairdialogue_decision", "asr=whisper_large_v3", "asr.batch_size=0"],
     "asr.batch_size=0"),
    (["probe=fairdialogue_decision", "target=qwen2_audio_7b", "target.llm.audio_in=sometimes"],
     "target.llm.audio_in='sometimes': expected true or false"),
]


REPORT = [
    (["runs=/no/such"], "runs=/no/such: no such directory"),
    (["runs={corpus}", "bootstrap.n_resamples=-1"], "bootstrap.n_resamples=-1: expected a non-neg"),
    (["runs={corpus}", "bootstrap.n_resamples=many"], "bootstrap.n_resamples='many'"),
    (["runs={corpus}", "wandb.report=maybe"], "wandb.report='maybe': expected true or false"),
]


QUIET = ["logger=none", "progress=false"]
LATER = ([("detect", QUIET, c) for c in DETECT] + [("probe", QUIET, c) for c in PROBE]
         + [("report", [], c) for c in REPORT])


@pytest.mark.parametrize("name, quiet, case", LATER, ids=[
    f"{n} " + " ".join(c[0]) for n, _, c in LATER])
def test_detect_probe_and_report(name: str, quiet: list[str], case: tuple, files, tmp_path,
                                 capsys) -> None:
    overrides, *expected = case
    line = fails_cleanly(name, tmp_path, [*quiet, *overrides], files, capsys)
    assert all(e.format(**files) in line for e in expected), line


# Every path option crossed with the kinds of bad file that apply to its format. A case is
# (entrypoint, overrides with {bad} for the bad path, the file's suffix, kinds); each bad file
# must give exit 2, one `error:` line that names it, and the kind's phrase below.
RANDOM = b"\xff\xfe\x00\x9c" + bytes(range(255, -1, -1)) * 4   # not UTF-8, not any format
TEXT = b"these are notes, not a binary file\n"
LATIN1 = {".jsonl": '{"id": "caf\xe9"}\n', ".json": '{"N": [{"word": "caf\xe9", "score": 1}]}',
          ".csv": "id,label\ncaf\xe9,N\n", ".txt": "Tell me, caf\xe9: {question}\n",
          ".jinja": "{{ messages }} caf\xe9\n", ".yaml": "seed: caf\xe9\n"}
SAYS = {"missing": "", "empty": "empty", "random": "UTF-8", "latin1": "UTF-8"}
TEXT_KINDS = ("missing", "empty", "random", "latin1", "shape")


def bad_file(folder: Path, kind: str, suffix: str, shape: bytes | None = None) -> Path:
    """One bad file of ``kind`` (missing, empty, random, latin1, text, shape) under ``folder``."""
    if kind == "missing":
        return folder / "no" / f"such{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}{suffix}"
    data = {"empty": b"", "random": RANDOM, "text": TEXT, "shape": shape or b""}.get(kind)
    path.write_bytes(LATIN1[suffix].encode("latin-1") if kind == "latin1" else data)
    return path


def parquet_bytes(columns: dict[str, list]) -> bytes:
    import io

    import pandas as pd

    buffer = io.BytesIO()
    pd.DataFrame(columns).to_parquet(buffer, index=False)
    return buffer.getvalue()


DETECTED = {"id": ["a", "b"], "label": ["N", "BB"], "pred": ["N", "BB"],
            "user_ability": ["none", "blind"]}
# (entrypoint, overrides, suffix, kinds, {kind: phrase} beyond SAYS, shape file's bytes)
PATHS = [
    ("train", ["experiment=smoke", "data=corpus", "data.path={bad}"], ".jsonl", TEXT_KINDS,
     {"shape": "expected a JSON object (one dialogue)"}, b"[1, 2]\n"),
    ("train", ["experiment=smoke", "data=corpus", "data.path={bad}"], ".parquet",
     ("empty", "text"), {"text": "not a readable Parquet file"}, None),
    ("train", ["experiment=smoke", "data=corpus", "data.path={bad}"], ".jsonl.gz",
     ("random",), {"random": "not a readable gzip file"}, None),
    ("train", ["experiment=smoke", "resume={bad}"], ".ckpt", ("missing", "empty", "text",
     "random"), {"text": "not a PyTorch checkpoint", "random": "not a PyTorch checkpoint"}, None),
    ("train", ["experiment=smoke", "intervention=mask", "lexicon.path={bad}"], ".json",
     TEXT_KINDS, {"shape": "expected an object"}, b"[1, 2]"),
    ("evaluate", ["data=corpus", "ckpt={model}", "data.path={bad}"], ".jsonl",
     ("empty", "random"), {}, None),
    ("attribute", ["data=corpus", "ckpt={model}", "data.path={bad}"], ".jsonl",
     ("empty", "latin1"), {}, None),
    ("evaluate", ["data=tiny", "ckpt={bad}"], ".ckpt", ("missing", "empty", "text", "random"),
     {"text": "not a PyTorch checkpoint", "random": "not a PyTorch checkpoint"}, None),
    ("evaluate", ["data=tiny", "ckpt={model}", "intervention=mask", "lexicon.path={bad}"],
     ".json", ("empty", "random", "latin1"), {}, None),
    ("attribute", ["data=tiny", "ckpt={bad}"], ".ckpt", ("missing", "empty", "text", "random"),
     {"text": "not a PyTorch checkpoint", "random": "not a PyTorch checkpoint"}, None),
    ("analyze", ["progress=false", "data.path={bad}"], ".jsonl", TEXT_KINDS,
     {"shape": "field 'turns': missing"}, b'{"id": "a", "label": "N", "role": "r", '
     b'"generator": "g", "user": {}, "agent": null}\n'),
    ("analyze", ["progress=false", "data.path={corpus}", "annotation.labels_path={bad}"], ".csv",
     TEXT_KINDS, {"shape": "missing column(s) ['human_label']"}, b"id,label\nx,N\n"),
    ("generate", ["progress=false", "generator=smollm2", "generator.llm.chat_template={bad}"],
     ".jinja", ("empty", "random", "latin1"), {}, None),
    ("detect", [*QUIET, "data=corpus", "data.path={bad}"], ".jsonl", TEXT_KINDS,
     {"shape": "expected a JSON object (one dialogue)"}, b'"a dialogue"\n'),
    ("detect", [*QUIET, "detector=finetuned", "ckpt={bad}"], ".ckpt", ("missing", "empty",
     "text"), {"text": "not a PyTorch checkpoint"}, None),
    ("detect", [*QUIET, "detector=external", "predictions.path={bad}"], ".csv", TEXT_KINDS,
     {"shape": "needs columns id, label and pred or flagged"}, b"id,label\na,N\n"),
    ("detect", [*QUIET, "detector=external", "predictions.path={bad}"], ".parquet",
     ("missing", "empty", "text", "random", "shape"),
     {"text": "not a Parquet file", "random": "not a Parquet file",
      "shape": "needs columns id, label and pred or flagged"}, parquet_bytes({"x": [1]})),
    ("detect", [*QUIET, "flips.with={bad}", "flips.without={predictions}"], ".parquet",
     ("missing", "empty", "text", "shape"), {"text": "not a Parquet file",
      "shape": "missing column(s) ['pred', 'user_ability']"},
     parquet_bytes({"id": ["a"], "label": ["N"]})),
    ("detect", [*QUIET, "llm_cache={bad}"], ".sqlite", ("text", "random"),
     {"text": "not a SQLite database", "random": "not a SQLite database"}, None),
    ("detect", [*QUIET, "+detector.llm.chat_template={bad}"], ".jinja", ("missing", "random"),
     {}, None),
    ("detect", [*QUIET, "+judges.models.0.llm.chat_template={bad}"], ".jinja", ("empty",), {},
     None),
    ("generate", ["progress=false", "llm_cache={bad}"], ".sqlite", ("text",),
     {"text": "not a SQLite database"}, None),
    ("probe", [*QUIET, "llm_cache={bad}"], ".sqlite", ("random",),
     {"random": "not a SQLite database"}, None),
    ("probe", [*QUIET, "+probe.judges.bias.llm.chat_template={bad}"], ".jinja", ("latin1",), {},
     None),
    ("probe", [*QUIET, "target.llm.model={bad}"], "", ("missing",), {}, None),
    ("detect", [*QUIET, "detector=granite_guardian_4_1", "detector.llm.model={bad}"], "",
     ("missing",), {}, None),
    ("probe", [*QUIET, "probe=cobia", "probe.dan_template={bad}"], ".txt",
     ("missing", "empty", "random", "latin1", "shape"),
     {"shape": "expected exactly one '{{question}}' placeholder"}, b"no placeholder here\n"),
    ("probe", [*QUIET, "probe=cobia", "probe.human_labels={bad}"], ".csv", TEXT_KINDS,
     {"shape": "expected columns id, method and at least one annotator"}, b"id,method\na,hcc\n"),
    ("probe", [*QUIET, "probe=fairdialogue_decision", "probe.answers.path={bad}"], ".csv",
     TEXT_KINDS, {"shape": "missing column(s) ['task', 'attribute', 'group', 'answer']"},
     b"item\n1\n"),
    ("probe", [*QUIET, "+target.llm.chat_template={bad}"], ".jinja",
     ("missing", "empty", "random", "latin1"), {}, None),
]
CASES = [(name, overrides, suffix, kind, {**SAYS, **says}.get(kind, ""), shape)
         for name, overrides, suffix, kinds, says, shape in PATHS for kind in kinds]


@pytest.mark.parametrize("name, overrides, suffix, kind, says, shape", CASES, ids=[
    f"{c[0]} {next(o for o in c[1] if '{bad}' in o).split('=')[0]} {c[3]}{c[2]}" for c in CASES])
def test_every_path_option_fails_cleanly_on_every_bad_file(
        name: str, overrides: list[str], suffix: str, kind: str, says: str, shape: bytes | None,
        files, tmp_path, capsys) -> None:
    bad = bad_file(tmp_path / "bad", kind, suffix, shape)
    line = fails_cleanly(name, tmp_path, [o.replace("{bad}", str(bad)) for o in overrides],
                         files, capsys)
    assert str(bad) in line and says.format() in line, line


@pytest.mark.parametrize("name, overrides", [
    ("detect", [*QUIET, "detector=external", "predictions.path={sheet}"]),
    ("probe", [*QUIET, "probe=fairdialogue_decision", "probe.answers.path={sheet}"]),
    ("probe", [*QUIET, "probe=cobia", "probe.human_labels={sheet}"]),
    ("analyze", ["progress=false", "data.path={corpus}", "annotation.labels_path={sheet}"]),
])
def test_errors_never_print_dialogue_text(name: str, overrides: list[str], files, tmp_path,
                                          capsys) -> None:
    """A transcript passed where a sheet is expected: its first line reads as a header, and
    the error says the columns are wrong without quoting it."""
    sheet = tmp_path / "transcript.csv"
    sheet.write_text("Agent: dear, let me fill that form in for you, it is hard for you\n"
                     "User: thank you\n")
    line = fails_cleanly(name, tmp_path, [o.replace("{sheet}", str(sheet)) for o in overrides],
                         files, capsys)
    assert str(sheet) in line and "column" in line and "dear" not in line, line


def recordings_folder(root: Path, named: str) -> Path:
    """A ``probe.audio.source=dir`` folder whose one clip is ``named`` in its manifest."""
    import numpy as np
    import soundfile

    folder = root / "recordings"
    folder.mkdir()
    soundfile.write(str(folder / "in.wav"), np.zeros(800), 16000)
    rows = "".join(f"award-01,award,{g},{named}\n" for g in ("male", "female"))
    (folder / "manifest.csv").write_text("item,task,group,path\n" + rows)
    return folder


# Inputs that parse but measure nothing, count one cell twice, or name a file out of their
# folder: each is one line naming the file and the positions (never a text or the path's value).
MEANING = [
    ("detect", ["detector=external", "predictions.path={f}"], "p.csv",
     "id,label,flagged\na,N,false\nb,OB,true\na,BB,true\n",
     ["p.csv: row 4, field 'id'", "(first at row 2)"]),
    ("probe", ["probe=fairdialogue_decision", "probe.answers.path={f}"], "a.csv",
     "item,task,attribute,group,answer\ni,award,gender,male,Yes\ni,award,gender,male,No way\n",
     ["a.csv: lines 2 and 3 answer the same cell"]),
    ("probe", ["probe=cobia", "probe.human_labels={f}"], "l.csv", "id,method,ann1\nx,hcc,\n",
     ["l.csv: no row holds a label"]),
    ("probe", ["probe=fairmt", "probe.answers.path={d}"], "Fixed_Format.json", "[]",
     ["Fixed_Format.json: an empty list, nothing to score"]),
]


@pytest.mark.parametrize("name, overrides, file, text, says", MEANING,
                         ids=[m[2] for m in MEANING])
def test_an_input_that_means_nothing_or_counts_twice_is_one_line(
        name: str, overrides: list[str], file: str, text: str, says: list[str], files,
        tmp_path, capsys) -> None:
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / file).write_text(text)
    given = [o.replace("{f}", str(folder / file)).replace("{d}", str(folder)) for o in overrides]
    line = fails_cleanly(name, tmp_path, [*QUIET, *given], files, capsys)
    assert all(e in line for e in says) and "No way" not in line, line


@pytest.mark.parametrize("named", ["{outside}", "../outside.wav", "link.wav"])
def test_a_recording_out_of_its_folder_is_refused_before_any_model(named: str, files, tmp_path,
                                                                   capsys) -> None:
    """An absolute path, a ``../`` and a symlink out: refused, and nothing is read or sent."""
    outside = tmp_path / "outside.wav"
    folder = recordings_folder(tmp_path, named.format(outside=outside))
    outside.write_bytes((folder / "in.wav").read_bytes())
    (folder / "link.wav").symlink_to(outside)
    line = fails_cleanly("probe", tmp_path, [
        *QUIET, "probe=fairdialogue_decision", "probe.mode=audio", "target=gpt4o_audio",
        "probe.audio.source=dir", f"probe.audio.path={folder}"], files, capsys)
    assert f"{folder / 'manifest.csv'}, line 2, field 'path'" in line
    assert "probe.audio.allow_outside=true" in line and "outside.wav" not in line, line
    assert not (tmp_path / "run" / "audio").exists()


def cobia_folder(root: Path) -> Path:
    """The CoBia files of the project's own stand-in (invented groups), to spoil one of."""
    from benevaudit.outputs.stand_in_files import write_files
    from benevaudit.probes.cobia.stand_in import stand_in_files

    return write_files(root / "cobia", stand_in_files())


@pytest.mark.parametrize("name, kind, says", [
    ("cobia_dataset.json", "empty", "empty"), ("cobia_dataset.json", "random", "UTF-8"),
    ("group_chars.json", "latin1", "UTF-8"), ("negative_description.json", "shape",
                                              "expected a JSON object"),
    ("cobia_dataset.json", "truncated", "not valid JSON"),
])
def test_a_bad_cobia_file_fails_cleanly(name: str, kind: str, says: str, files, tmp_path,
                                        capsys) -> None:
    folder = cobia_folder(tmp_path)
    data = {"empty": b"", "random": RANDOM, "shape": b"[1, 2]",
            "latin1": LATIN1[".json"].encode("latin-1"),
            "truncated": (folder / name).read_bytes()[:40]}[kind]
    (folder / name).write_bytes(data)
    line = fails_cleanly("probe", tmp_path, [*QUIET, "probe=cobia_hcc",
                                             f"probe.data.path={folder}"], files, capsys)
    assert str(folder / name) in line and says in line, line


@pytest.mark.parametrize("kind, says", [("empty", "empty"), ("random", "UTF-8"),
                                        ("shape", "expected a list of {role, content} messages")])
def test_a_bad_template_of_a_cobia_clone_fails_cleanly(kind: str, says: str, files, tmp_path,
                                                       capsys) -> None:
    """The clone layout (stand-in data in the repository's folders) with a spoiled HCC template."""
    from benevaudit.probes.cobia.release import CLONE_DIRS

    flat = cobia_folder(tmp_path)
    clone = tmp_path / "clone"
    for name, sub in CLONE_DIRS.items():
        (clone / sub).mkdir(parents=True, exist_ok=True)
        (clone / sub / name).write_bytes((flat / name).read_bytes())
    template = bad_file(clone / "prompt-templates", kind, ".json", b'{"role": "user"}')
    template = template.rename(template.with_name("HCC-template.json"))
    line = fails_cleanly("probe", tmp_path, [*QUIET, "probe=cobia_hcc", "probe.layout=official",
                                             f"probe.data.path={clone}"], files, capsys)
    assert str(template) in line and says in line, line


def spoiled_run(root: Path, files: dict[str, Path], name: str, data: bytes) -> Path:
    """A train run directory (model/ and .hydra/config.yaml) with ``name`` overwritten."""
    import shutil

    run = root / "run"
    shutil.copytree(files["model"], run / "model")
    (run / ".hydra").mkdir()
    (run / ".hydra" / "config.yaml").write_text("seed: 1\n")
    (run / "metrics.json").write_text('{"test/macro_f1": 0.5}\n')
    (run / name).write_bytes(data)
    return run


SPOILED = [
    ("evaluate", ["data=tiny", "ckpt={run}"], ".hydra/config.yaml", b"", "empty"),
    ("evaluate", ["data=tiny", "ckpt={run}"], ".hydra/config.yaml", RANDOM, "UTF-8"),
    ("attribute", ["data=tiny", "ckpt={run}"], ".hydra/config.yaml", b"a: [1\n", "not valid YAML"),
    ("detect", [*QUIET, "detector=finetuned", "ckpt={run}"], ".hydra/config.yaml",
     b"- a list\n", "expected a mapping"),
    ("evaluate", ["data=tiny", "ckpt={run}"], "model/config.json", RANDOM, "UTF-8"),
    ("probe", [*QUIET, "target.llm.model={run}/model"], "model/config.json", b"", "empty"),
    ("generate", ["generator=smollm2", "generator.llm.model={run}/model"], "model/config.json",
     b"{", "not valid JSON"),
    ("report", ["runs={run}"], "metrics.json", b"", "metrics.json is half written or not JSON"),
    ("report", ["runs={run}"], "metrics.json", RANDOM, "metrics.json is half written or not JSON"),
    ("report", ["runs={run}"], ".hydra/config.yaml", b"a: [1\n", "unreadable YAML"),
    ("report", ["runs={run}/metrics.json"], "metrics.json", b"{}", "a file, not a directory"),
    ("report", ["runs={run}"], "predictions.parquet", b"", "predictions.parquet: the file is empty"),
    ("report", ["runs={run}"], "predictions.parquet", TEXT, "predictions.parquet: not a Parquet"),
    ("generate", ["progress=false", "out_dir={run}"], "manifest.json", b"{\"count\": 3",
     "not valid JSON"),
    ("probe", [*QUIET, "probe=fairdialogue_feedback", "probe.feedback.items_from=[{run}]"],
     "responses.parquet", b"", "responses.parquet: the file is empty"),
    ("probe", [*QUIET, "probe=fairdialogue_feedback", "probe.feedback.items_from=[{run}]"],
     "responses.parquet", TEXT, "responses.parquet: not a Parquet file"),
    ("probe", [*QUIET, "probe=fairdialogue_feedback", "probe.feedback.items_from=[{run}]"],
     "responses.parquet", parquet_bytes({"item": ["1"]}), "missing column(s)"),
]


@pytest.mark.parametrize("name, overrides, spoilt, data, says", SPOILED, ids=[
    f"{c[0]} {c[2]} {c[4]}" for c in SPOILED])
def test_a_spoiled_run_directory_fails_cleanly(name: str, overrides: list[str], spoilt: str,
                                               data: bytes, says: str, files, tmp_path,
                                               capsys) -> None:
    """Run directories read back: a training run's config and model, a run named for the
    report, the out_dir a generation resumes."""
    run = spoiled_run(tmp_path, files, spoilt, data)
    line = fails_cleanly(name, tmp_path, [o.replace("{run}", str(run)) for o in overrides],
                         files, capsys)
    assert str(run) in line and says in line, line


@pytest.mark.parametrize("name, overrides", [
    ("train", ["experiment=smoke"]), ("train", ["experiment=paper", "data.path={corpus}"]),
    ("evaluate", ["ckpt={model}", "intervention=mask", "lexicon.path={lexicon_json}"]),
    ("attribute", ["ckpt={model}"]), ("analyze", ["data.path={corpus}"]),
    ("generate", ["generator=smollm2"]), ("generate", ["generator=gemma3_12b"]),
    ("detect", []), ("detect", ["detector=granite_guardian_4_1"]),
    ("detect", ["detector=finetuned", "ckpt={model}"]),
    ("probe", ["probe=cobia"]), ("probe", ["probe=fairdialogue_recommendation"]),
])
def test_good_inputs_pass_the_checks(name: str, overrides: list[str], files, tmp_path) -> None:
    """The shipped configs, with real files, pass: the checks reject only what is wrong."""
    cfg = configure(name, tmp_path, [o.format(**files) for o in overrides])
    module, spec = RUN_SPECS[name]
    run_spec = getattr(importlib.import_module(f"benevaudit.pipelines.{module}"), spec)
    assert run_spec.of(plain(cfg)).model_fields_set


# each entrypoint's typed spec of its whole config
RUN_SPECS = {"train": ("train", "TrainRun"), "evaluate": ("evaluate", "EvaluateRun"),
             "attribute": ("attribute", "AttributeRun"), "analyze": ("analyze", "AnalyzeRun"),
             "detect": ("detect", "DetectRun"), "probe": ("probe", "ProbeRun"),
             "generate": ("generate", "GenerateRun"), "report": ("report", "ReportRun")}


def test_generator_block_switched_to_hf_names_the_vllm_key_and_the_option_swaps_it(
        tmp_path) -> None:
    """``generator.llm.backend=hf`` on a vLLM generator keeps vLLM's non-null keys, which hf
    does not take: refused, naming one; ``llm@generator.llm=hf`` swaps the whole block."""
    from benevaudit.errors import ConfigError
    from benevaudit.pipelines.config import validated
    from benevaudit.pipelines.generate import GenerateRun

    cfg = configure("generate", tmp_path, ["generator=gemma3_12b", "generator.llm.backend=hf"])
    with pytest.raises(ConfigError, match=r"^generator\.llm\.seed: the hf backend takes no "
                                          r"seed \(keys of vllm\); drop it"):
        validated(GenerateRun, cfg)
    cfg = configure("generate", tmp_path, ["generator=gemma3_12b", "llm@generator.llm=hf",
                                           "generator.llm.model=embedded:smollm2"])
    llm = validated(GenerateRun, cfg).generator.llm
    assert (llm.backend, llm.max_model_len) == ("hf", 4096)    # the generator's own length
    assert llm.constructor_kwargs()["batch_size"] == 8
    assert "gpu_memory_utilization" not in llm.constructor_kwargs()


@pytest.mark.parametrize("script, args, expected", [
    ("analyze.py", ["data.path=/no/such/corpus.jsonl"], "data.path=/no/such/corpus.jsonl"),
    ("attribute.py", ["ckpt={text_ckpt}"], "not a PyTorch checkpoint"),
    ("detect.py", ["detector=external", "predictions.path={binary_csv}", "logger=none"],
     "binary.csv:line 1: not UTF-8 text"),
])
def test_scripts_print_one_line_and_exit_2(script: str, args: list[str], expected: str, files,
                                           tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / script), *[a.format(**files) for a in args],
         f"hydra.run.dir={tmp_path / 'run'}", f"paths.root_dir={tmp_path}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1 and expected in lines[0], proc.stderr


def test_guarded_turns_user_errors_into_one_line_and_keeps_bugs(capsys) -> None:
    """A corpus error (from any depth) is one line and exit 2; a bug keeps its traceback."""
    from omegaconf import OmegaConf

    from benevaudit.corpus import CorpusError

    def bad_corpus(cfg: DictConfig) -> None:
        raise CorpusError("corpus.jsonl:line 3: field 'label': expected one of N, OB, BB\n"
                          "(a second line)")

    with pytest.raises(SystemExit) as stop:
        guarded(bad_corpus, OmegaConf.create({}))
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("error: corpus.jsonl:line 3: field 'label': expected one "
                                       "of N, OB, BB; (a second line)\n")
    for bug in (KeyError("x"), ValueError("a bug"), RuntimeError("a bug"), TypeError("a bug")):
        def buggy(cfg: DictConfig, bug: Exception = bug) -> None:
            raise bug

        with pytest.raises(type(bug)):
            guarded(buggy, OmegaConf.create({}))
