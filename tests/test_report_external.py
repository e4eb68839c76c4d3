"""External validity: the verdict rule on hand-made intervals, which sections claim gold runs,
and the section's tables and report text built from run directories as the producers write them
(train runs with ``external/<set>/…``, evaluate and detect runs on a gold ``data.kind``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benevaudit.metrics.classification import classification_metrics
from benevaudit.report.runs import Run, read_run
from benevaudit.report.sections import detection, external, finetune_audit
from benevaudit.metrics.verdict import FAILS, TRANSFERS, UNDETERMINED, verdict
from report_fixtures import write_run

FAILING = {"macro_f1": 0.28, "macro_f1_ci_low": 0.24, "macro_f1_ci_high": 0.32,
           "chance_macro_f1": 0.333, "n": 600.0,
           "auroc_OB_vs_N": 0.39, "auroc_OB_vs_N_ci_low": 0.33, "auroc_OB_vs_N_ci_high": 0.45,
           "auroc_BB_vs_N": 0.58, "auroc_BB_vs_N_ci_low": 0.52, "auroc_BB_vs_N_ci_high": 0.64}
PASSING = {"macro_f1": 0.61, "macro_f1_ci_low": 0.57, "macro_f1_ci_high": 0.65,
           "chance_macro_f1": 0.333, "n": 600.0,
           **{f"auroc_{p}{s}": v for p in ("BB_vs_N", "BB_vs_OB", "OB_vs_N")
              for s, v in (("", 0.7), ("_ci_low", 0.64), ("_ci_high", 0.76))}}
CONFUSION = {"N": (0.5, 0.3, 0.2), "OB": (0.6, 0.25, 0.15), "BB": (0.4, 0.2, 0.4)}


def _keys(prefix: str, values: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}{k}": v for k, v in values.items()}


def _confusion(prefix: str, classes: tuple[str, ...] = ("N", "OB", "BB")) -> dict[str, float]:
    return {f"{prefix}confusion_{t}_to_{p}": CONFUSION[t][i]
            for t in classes for i, p in enumerate(("N", "OB", "BB"))}


def _strata(base: str) -> dict[str, float]:
    out = {}
    for value, n, rate in (("female", 300.0, 0.45), ("male", 300.0, 0.55)):
        out.update(_keys(f"{base}stratum/{value}/", {"n": n, "trigger_rate": rate,
                                                     "mean_p_N": 0.5, "mean_p_OB": 0.3,
                                                     "mean_p_BB": 0.2}))
    return out


def _train(path: Path, external_sets: dict[str, dict[str, float]]) -> Path:
    metrics = {"test/macro_f1": 0.91, "test/macro_f1_ci_low": 0.88, "test/macro_f1_ci_high": 0.94}
    for name, values in external_sets.items():
        p = f"external/{name}/"
        classes = ("N", "OB") if name == "diasafety" else ("N", "OB", "BB")   # no BB there
        # DiaSafety's confusion as the metric writer gives it: its BB row (no support) zeros
        confusion = ({k.replace("external/diasafety/", p): v for k, v in classification_metrics(
            [0, 1, 1, 2], [0, 0, 1, 1], prefix="external/diasafety").items()
            if "/confusion_" in k} if name == "diasafety" else _confusion(p, classes))
        metrics |= _keys(p, values) | confusion | _strata(p)
        metrics |= {f"{p}trigger/TR_{c}": (0.5, 0.4, 0.6)[i] for i, c in enumerate(classes)}
    return write_run(path, "train", {"model": "minilm", "data": "embedded", "intervention": "none"},
                     {"data": {"kind": "embedded"}, "intervention": {"name": "none", "steps": {}}},
                     metrics, ["seed=42"])


def _detect(path: Path, kind: str, delta: float, ci: tuple[float, float] | None,
            with_bb: bool = True) -> Path:
    rates = {"N": 0.1, "OB": 0.5, "BB": 0.5 - delta} if with_bb else {"N": 0.1, "OB": 0.6}
    metrics = {f"trigger/TR_{c}": v for c, v in rates.items()}
    metrics |= {"binary/precision": 0.7, "binary/recall": 0.6, "binary/f1": 0.646}
    if with_bb:
        metrics["trigger/delta_OB_BB"] = delta
    if ci is not None:
        metrics |= {"trigger/delta_OB_BB_ci_low": ci[0], "trigger/delta_OB_BB_ci_high": ci[1]}
    return write_run(path, "detect", {"detector": "llamaguard", "data": kind},
                     {"data": {"kind": kind}}, metrics, ["detector=llamaguard", f"data={kind}"])


@pytest.fixture()
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    baseline = _train(root / "train_fail", {"edos": FAILING})
    _train(root / "train_pass", {"edos": PASSING, "diasafety": {
        k: v for k, v in PASSING.items() if k.startswith(("macro", "chance", "n", "auroc_OB"))}})
    evaluated = _keys("test/", FAILING) | _confusion("test/") | _strata("")
    evaluated |= {"transfer/in_distribution_macro_f1": 0.9, "trigger/TR_N": 0.5,
                  "trigger/TR_OB": 0.4, "trigger/TR_BB": 0.6}
    write_run(root / "eval_edos", "evaluate", {"model": "minilm", "data": "edos"},
              {"data": {"kind": "edos"}, "ckpt": str(baseline)}, evaluated, ["data=edos"])
    _detect(root / "detect_edos", "edos", 0.04, (-0.03, 0.11))
    _detect(root / "detect_corpus", "embedded", 0.30, (0.25, 0.35))
    _detect(root / "detect_diasafety", "diasafety", 0.0, None, with_bb=False)
    return root


def _run(root: Path, name: str) -> Run:
    return read_run(root / name, name)


def test_verdict_reads_intervals_not_means() -> None:
    assert verdict(_keys("external/edos/", FAILING), "external/edos/") == FAILS
    assert verdict(_keys("external/edos/", PASSING), "external/edos") == TRANSFERS
    # a mean above chance whose interval reaches it does not transfer
    assert verdict(_keys("test/", PASSING | {"macro_f1_ci_low": 0.33}), "test/") == FAILS
    # AUROCs absent for lack of a class (DiaSafety, no BB) are not asked for
    no_bb = {k: v for k, v in PASSING.items() if "BB" not in k}
    assert verdict(_keys("test/", no_bb), "test/") == TRANSFERS


def test_verdict_is_undetermined_only_when_nothing_fails() -> None:
    no_ci = {k: v for k, v in PASSING.items() if k != "auroc_BB_vs_OB_ci_low"}
    assert verdict(_keys("test/", no_ci), "test/") == UNDETERMINED
    assert verdict(_keys("test/", {"macro_f1": 0.6}), "test/") == UNDETERMINED
    failing_no_chance = {k: v for k, v in FAILING.items() if k != "chance_macro_f1"}
    assert verdict(_keys("test/", failing_no_chance), "test/") == FAILS   # OB-vs-N fails


def test_gold_runs_leave_the_corpus_tables(runs_root: Path) -> None:
    evaluated, trained = _run(runs_root, "eval_edos"), _run(runs_root, "train_fail")
    gold_detect, corpus_detect = _run(runs_root, "detect_edos"), _run(runs_root, "detect_corpus")
    assert not finetune_audit.claims(evaluated) and finetune_audit.claims(trained)
    assert not detection.claims(gold_detect) and detection.claims(corpus_detect)
    assert all(external.claims(r) for r in (evaluated, trained, gold_detect, corpus_detect))
    assert external.is_gold(evaluated) and not external.is_gold(trained)


def _build(root: Path, tmp_path: Path):
    from benevaudit.pipelines.report_files import build_report

    return build_report([root], tmp_path / "out", n_resamples=0)


def _table(section, start: str):
    return next(t for t in section.tables if t.title.startswith(start))


def test_transfer_table_gives_each_classifier_its_verdict(runs_root: Path, tmp_path: Path
                                                          ) -> None:
    files = _build(runs_root, tmp_path)
    section = files.sections[0]
    assert section.key == "external"                       # validity is read first
    table = section.tables[0]                              # edos (all three classes) first
    assert table.title == "edos: transfer of classifiers to human-labelled data"
    rows = {r[0]: r for r in table.text_rows()}
    assert set(rows) == {"train_fail", "train_pass", "eval_edos"}
    assert rows["train_fail"][-1] == rows["eval_edos"][-1] == "does not transfer"
    assert rows["train_pass"][-1] == "transfers"
    headers = table.headers
    assert rows["train_fail"][headers.index("Macro-F1 on edos")] == "0.280 [0.240, 0.320]"
    assert rows["train_fail"][headers.index("In-distribution macro-F1")] == "0.910 [0.880, 0.940]"
    assert rows["eval_edos"][headers.index("Trained on")] == "embedded"   # from its checkpoint
    assert rows["train_fail"][headers.index("AUROC OB-vs-N")] == "0.390 [0.330, 0.450]"
    assert "train_fail: in distribution 0.910 [0.880, 0.940]; on edos 0.280 [0.240, 0.320]: " \
           "does not transfer." in table.note
    assert "train_pass:" not in table.note and "ci_low > chance" in table.note
    dia = _table(section, "diasafety: transfer")                # no BB: only OB-vs-N asked for
    assert [h for h in dia.headers if h.startswith("AUROC")] == ["AUROC OB-vs-N"]
    assert dia.text_rows()[0][-1] == "transfers"
    dia_confusion = _table(section, "diasafety: confusion of train_pass")
    assert [r[0] for r in dia_confusion.rows] == ["N", "OB"]   # no BB row: no BB dialogues
    assert dia_confusion.text_rows()[1][:4] == ["OB", "0.000", "0.500", "0.500"]
    assert "Not in the gold set, so not shown: BB." in dia_confusion.note
    edos = _table(section, "edos: confusion of train_pass")
    assert [r[0] for r in edos.rows] == ["N", "OB", "BB"] and "Not in" not in edos.note


def test_confusion_strata_and_detector_gaps(runs_root: Path, tmp_path: Path) -> None:
    section = _build(runs_root, tmp_path).sections[0]
    confusion = _table(section, "edos: confusion of train_fail")
    assert confusion.text_rows()[1] == ["OB", "0.600", "0.250", "0.150", "0.400"]
    assert _table(section, "edos: confusion of eval_edos").text_rows()[2][-1] == "0.600"
    strata = _table(section, "edos: strata")
    assert ["eval_edos", "female", "300", "0.450", "0.500", "0.300", "0.200"] in \
        strata.text_rows()
    detectors = _table(section, "edos: detectors")
    row = dict(zip(detectors.headers, detectors.text_rows()[0]))
    assert row["Δ OB−BB on edos"] == "0.040 [-0.030, 0.110]"
    assert row["Δ OB−BB on the corpus"] == "0.300 [0.250, 0.350]"
    assert "the gap is not confirmed on human data" in detectors.note
    dia = _table(section, "diasafety: detectors")
    assert "TR_BB" not in dia.headers and dia.headers[-3:] == ["Precision", "Recall", "F1"]
    corpus_gap = dict(zip(dia.headers, dia.text_rows()[0]))["Δ OB−BB on the corpus"]
    assert corpus_gap == "0.300 [0.250, 0.350]"


def test_report_html_names_the_section_and_the_verdict(runs_root: Path, tmp_path: Path) -> None:
    files = _build(runs_root, tmp_path)
    page = files.html.read_text(encoding="utf-8")
    assert "External validity" in page and "does not transfer" in page
    assert page.index("External validity") < page.index("Detection (Table 3)")
    keys = [s.key for s in files.sections]
    assert "finetune_audit" in keys and "detection" in keys
    table4 = next(s for s in files.sections if s.key == "finetune_audit").tables[0]
    assert len(table4.rows) == 1                       # both clean trainings, no gold evaluate
    assert len(next(s for s in files.sections if s.key == "detection").tables[0].rows) == 1


def test_corpus_detectors_alone_render_no_section(tmp_path: Path) -> None:
    _detect(tmp_path / "runs" / "d", "embedded", 0.3, None)
    assert [s.key for s in _build(tmp_path / "runs", tmp_path).sections] == ["detection",
                                                                             "what_ran"]


def test_wandb_panels_are_the_external_scores(runs_root: Path, tmp_path: Path) -> None:
    from benevaudit.report.wandb_report import report_spec

    files = _build(runs_root, tmp_path)
    spec = report_spec(files.sections, files.runs, "p", None, "t")
    grids = [b for b in spec["blocks"] if b["type"] == "panel_grid"]
    titles = {p["title"] for p in grids[0]["panels"]}       # the first section's grid
    assert "external/edos/macro_f1" in titles and "external/edos/auroc_OB_vs_N" in titles
    assert not any(t.startswith("test/") or "ci_" in t for t in titles)
