"""Gold sets through the pipelines, on the stand-ins: train.py's external scores and its
inputs.json, evaluate.py and detect.py on ``data=edos``, the report over those runs, and the
promise that no item's text reaches a log, an error, metrics.json, a figure or the report.

The runs happen once (a module fixture), as their entrypoints would leave them: ``.hydra/``
and Hydra's ``<task>.log`` are written beside the pipeline's own files."""

import hashlib
import io
import json
import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.parquet as pq
import pytest
import yaml
from hydra import compose, initialize_config_dir
from matplotlib.figure import Figure
from matplotlib.text import Text
from omegaconf import DictConfig, OmegaConf

from benevaudit.errors import InputError
from benevaudit.pipelines import detect, evaluate, train
from benevaudit.pipelines.report_files import ReportFiles, build_report
from benevaudit.schema import CLASSES
from config_fixtures import CONF, smoke_train
from gold_fixtures import SENTINEL, write_diasafety, write_edos

EDOS_CSV = "data/edos_labelled_aggregated.csv"
PAIRS = ("OB_vs_N", "BB_vs_N", "BB_vs_OB")


class GoldRuns(NamedTuple):
    root: Path
    edos: Path                      # the EDOS stand-in's folder
    train: dict[str, float]
    evaluate: dict[str, float]
    detect: dict[str, float]
    report: ReportFiles
    said: list[str]                 # every log record, stdout, stderr and warning of the runs
    drawn: list[str]                # every text of every figure the runs and the report saved


class Said(logging.Handler):
    def __init__(self, said: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(logging.Formatter().format(record))   # with its traceback, if any


@contextmanager
def attached(handler: logging.Handler, level: int) -> Iterator[None]:
    """``handler`` on the root logger and on every logger that does not propagate to it."""
    loggers = [logging.getLogger()] + [
        lg for lg in logging.root.manager.loggerDict.values()
        if isinstance(lg, logging.Logger) and not lg.propagate]
    before = logging.getLogger().level
    logging.getLogger().setLevel(level)
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
        logging.getLogger().setLevel(before)


@contextmanager
def watched(said: list[str], drawn: list[str]) -> Iterator[None]:
    """Everything the runs say (logs at DEBUG, stdout, stderr, warnings) into ``said``, and the
    texts of every figure saved into ``drawn``."""
    out, err, savefig = io.StringIO(), io.StringIO(), Figure.savefig

    def recording(fig: Figure, *args: Any, **kwargs: Any) -> Any:
        drawn.extend(t.get_text() for t in fig.findobj(Text))
        return savefig(fig, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings(record=True) as caught, \
            redirect_stdout(out), redirect_stderr(err), attached(Said(said), logging.DEBUG):
        warnings.simplefilter("always")
        patch.setattr(Figure, "savefig", recording)
        try:
            yield
        finally:
            said += [out.getvalue(), err.getvalue()] + [str(w.message) for w in caught]


def launch(pipeline: Callable[[DictConfig], Any], cfg: DictConfig,
           choices: dict[str, str]) -> Any:
    """``pipeline(cfg)`` leaving what its entrypoint would: ``.hydra/`` and ``<task>.log``."""
    out = Path(cfg.paths.output_dir)
    (out / ".hydra").mkdir(parents=True)
    OmegaConf.save(cfg, out / ".hydra" / "config.yaml", resolve=True)
    runtime = {"choices": choices, "output_dir": str(out)}
    (out / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump(
        {"hydra": {"runtime": runtime, "job": {"name": cfg.task_name}}}))
    (out / ".hydra" / "overrides.yaml").write_text("[]\n")
    log_file = logging.FileHandler(out / f"{cfg.task_name}.log")
    log_file.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    try:
        with attached(log_file, logging.INFO):
            return pipeline(cfg)
    finally:
        log_file.close()


def composed(primary: str, root: Path, *overrides: str) -> DictConfig:
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose(primary, overrides=[
            "logger=none", f"paths.root_dir={root}",
            f"paths.output_dir={root / 'runs' / primary}", f"paths.cache_dir={root / 'cache'}",
            *overrides])


def run_all(root: Path, edos: Path, dia: Path) -> tuple[dict, dict, dict, ReportFiles]:
    """A tiny train run scored on both stand-ins, evaluate and detect on EDOS, the report."""
    data = [f"data.path={edos}", "data.strata=true"]
    trained = launch(train.run, smoke_train(
        root / "runs", f"paths.output_dir={root / 'runs' / 'train'}", "trainer.max_epochs=1",
        "save_model=true", "attribution.enabled=false", "external=[edos,diasafety]",
        f"external.edos.data.path={edos}", "external.edos.data.strata=true",
        f"external.diasafety.data.path={dia}"),
        {"data": "tiny", "model": "tiny_bert", "external": "[edos,diasafety]"})
    run = root / "runs" / "train"
    evaluated = launch(evaluate.run, composed("evaluate", root, "model=tiny_bert", "data=edos",
                                              *data, f"ckpt={run}", "eval.limit=9"),
                       {"data": "edos", "model": "tiny_bert"})
    detected = launch(detect.run, composed("detect", root, "data=edos", *data, f"ckpt={run}",
                                           "detector=finetuned", "eval.fraction=1.0",
                                           "progress=false"),
                      {"data": "edos", "detector": "finetuned"})
    report = build_report([root / "runs"], root / "report", n_resamples=50)
    return trained, evaluated, detected, report


@pytest.fixture(scope="module")
def gold_runs(tmp_path_factory) -> GoldRuns:
    root = tmp_path_factory.mktemp("gold")
    edos, dia = write_edos(root / "data" / "edos"), write_diasafety(root / "data" / "dia")
    said: list[str] = []
    drawn: list[str] = []
    with watched(said, drawn):
        results = run_all(root, edos, dia)
    return GoldRuns(root, edos, *results, said, drawn)


def inputs_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "inputs.json").read_text())


def test_train_scores_each_external_set_and_lists_its_files(gold_runs):
    m, run = gold_runs.train, gold_runs.root / "runs" / "train"
    for key in ("macro_f1", "macro_f1_ci_low", "macro_f1_ci_high", "chance_macro_f1",
                *(f"auroc_{p}" for p in PAIRS)):
        assert 0.0 <= m[f"external/edos/{key}"] <= 1.0, key
    assert m["external/edos/macro_f1_ci_low"] <= m["external/edos/macro_f1"] \
        <= m["external/edos/macro_f1_ci_high"]
    assert m["external/edos/chance_macro_f1"] == pytest.approx(1 / 3)    # 12 N, 12 OB, 12 BB
    assert m["external/edos/n"] == 36                                    # strata unscored
    assert m["external/edos/stratum/3.1/n"] == 3 and m["external/edos/stratum/3.3/n"] == 6
    assert 0.0 <= m["external/edos/stratum/4.2/trigger_rate"] <= 1.0
    assert "external/diasafety/auroc_OB_vs_N" in m
    assert not [k for k in m if k.startswith("external/diasafety/auroc_BB")]   # no BB class
    assert json.loads((run / "metrics.json").read_text())["external/edos/macro_f1"] == \
        pytest.approx(m["external/edos/macro_f1"])
    preds = pq.read_table(run / "external_edos_predictions.parquet").to_pandas()
    assert len(preds) == 43 and preds["label"].isna().sum() == 7 and "stratum" in preds
    [edos_file] = inputs_of(run)["external/edos"]["files"]
    csv = gold_runs.edos / EDOS_CSV
    assert edos_file["path"] == str(csv.resolve())
    assert edos_file["sha256"] == hashlib.sha256(csv.read_bytes()).hexdigest()
    assert edos_file["bytes"] == csv.stat().st_size
    assert len(inputs_of(run)["external/diasafety"]["files"]) == 3


def test_evaluate_on_edos_is_a_transfer_test(gold_runs):
    m, run = gold_runs.evaluate, gold_runs.root / "runs" / "evaluate"
    assert m["test/n"] == 9                                              # eval.limit: 3 a class
    for pair in PAIRS:
        assert 0.0 <= m[f"test/auroc_{pair}"] <= 1.0
        assert m[f"test/auroc_{pair}_ci_low"] <= m[f"test/auroc_{pair}_ci_high"]
    assert m["stratum/3.2/n"] == 2 and m["stratum/none/n"] == 3
    assert m["transfer/in_distribution_macro_f1"] == pytest.approx(gold_runs.train["test/macro_f1"])
    assert inputs_of(run)["data"]["kind"] == "edos"
    preds = pq.read_table(run / "predictions.parquet").to_pandas()
    assert sorted(preds["label"].dropna().value_counts()) == [3, 3, 3] and len(preds) == 16


def test_detect_on_edos_scores_every_post(gold_runs):
    m, run = gold_runs.detect, gold_runs.root / "runs" / "detect"
    assert m["detect/n"] == 36 and m["detect/n_unlabelled"] == 7         # strata beside
    assert len(pq.read_table(run / "predictions.parquet")) == 43
    for pair in PAIRS:
        assert 0.0 <= m[f"test/auroc_{pair}"] <= 1.0
    assert {f"trigger/TR_{c}" for c in CLASSES} <= set(m)
    assert m["stratum/4.1/n"] == 1
    assert inputs_of(run)["data"]["files"][0]["sha256"] == \
        hashlib.sha256((gold_runs.edos / EDOS_CSV).read_bytes()).hexdigest()


def test_report_reads_the_gold_runs(gold_runs):
    report = gold_runs.report
    assert {r.path.name: r.status for r in report.runs} == {
        "train": "ok", "evaluate": "ok", "detect": "ok"}
    assert "external" in {s.key for s in report.sections}
    assert "External validity" in report.html.read_text(encoding="utf-8")


def leaks(file: Path) -> bool:
    """Whether the marker is in the file's bytes, or in any cell of a (compressed) Parquet."""
    if SENTINEL.encode() in file.read_bytes():
        return True
    if file.suffix == ".parquet":
        return SENTINEL in json.dumps(pq.read_table(file).to_pylist(), default=str)
    return False


def test_no_item_text_in_any_file_log_or_figure(gold_runs):
    files = [p for folder in ("runs", "report", "cache") for p in
             (gold_runs.root / folder).rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".log", ".json", ".html", ".md", ".csv", ".png", ".parquet", ".yaml"} <= kinds
    assert [str(p.relative_to(gold_runs.root)) for p in files if leaks(p)] == []
    assert any("external/edos" in s for s in gold_runs.said)     # the capture saw the runs
    assert sum(SENTINEL in s for s in gold_runs.said) == 0
    assert gold_runs.drawn and sum(SENTINEL in s for s in gold_runs.drawn) == 0


def test_a_bad_gold_file_stops_train_before_training_in_one_line(tmp_path, caplog, capsys):
    edos = write_edos(tmp_path / "edos")
    csv = edos / EDOS_CSV
    rows = csv.read_text().splitlines()
    rows[30] = rows[30].replace("3.3 backhanded", "backhanded")       # a vector without its code
    csv.write_text("\n".join(rows) + "\n")
    with caplog.at_level(logging.DEBUG), pytest.raises(InputError) as caught:
        train.run(smoke_train(tmp_path, "external=[edos]", f"external.edos.data.path={edos}"))
    message = str(caught.value)
    assert f"{csv}:line 31" in message and "label_vector" in message
    assert "\n" not in message and SENTINEL not in message
    assert not (tmp_path / "run" / "checkpoints").exists()               # no model work
    assert SENTINEL not in caplog.text and SENTINEL not in "".join(capsys.readouterr())


def test_each_run_records_what_ran(gold_runs):
    import json

    for task in ("train", "evaluate", "detect"):
        saved = json.loads((gold_runs.root / "runs" / task / "run.json").read_text())
        assert saved["entrypoint"] == task and saved["status"] == "complete", task
        assert saved["inputs"]["data"]["files"], task
    train = json.loads((gold_runs.root / "runs" / "train" / "run.json").read_text())
    assert train["inputs"]["external/edos"]["kind"] == "edos"
