"""Paired comparison of two runs over the same items: McNemar, sign-flip and permutation
p-values against statsmodels and scipy, Holm against statsmodels, and ``report.py runs=[A,B]
paired=true`` end to end (files, section, flips, gate, refusals)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_fixtures import predictions, write_run
from scipy.stats import permutation_test
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from benevaudit.errors import BenevauditError
from benevaudit.metrics import paired as pm
from benevaudit.metrics.paired import holm, mcnemar, signflip, swap_test
from benevaudit.metrics.rates import confusion_rates

ROOT = Path(__file__).resolve().parents[1]


# ---- the tests themselves ------------------------------------------------------------------
@pytest.mark.parametrize("b,c", [(0, 0), (3, 9), (10, 10), (1, 12), (25, 40), (7, 0)])
def test_mcnemar_exact_matches_statsmodels(b, c):
    expected = sm_mcnemar(np.array([[30, b], [c, 41]]), exact=True).pvalue
    assert mcnemar(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_mid_p_by_hand():
    # b=3, c=9: P[Bin(12, 1/2) <= 3] = (1 + 12 + 66 + 220) / 4096, P[= 3] = 220 / 4096
    assert mcnemar(3, 9) == pytest.approx(598 / 4096)
    assert mcnemar(3, 9, mid_p=True) == pytest.approx(378 / 4096)


def test_signflip_of_one_rate_is_mcnemar():
    fa = np.array([1] * 5 + [0] * 2 + [1] * 10 + [0] * 20)      # 5 flagged by A only, 2 by B only
    fb = np.array([0] * 5 + [1] * 2 + [1] * 10 + [0] * 20)
    assert signflip((fb - fa) / len(fa)) == pytest.approx(mcnemar(5, 2), rel=1e-12)


def delta(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """TR_OB − TR_BB of flags x [..., n]."""
    return x[..., labels == "OB"].mean(-1) - x[..., labels == "BB"].mean(-1)


def test_signflip_of_delta_matches_scipys_exact_paired_permutation():
    rng = np.random.default_rng(4)
    labels = np.array(["OB"] * 7 + ["BB"] * 6)
    fa = (rng.random(13) < 0.6).astype(float)
    fb = fa.copy()
    fb[[0, 2, 3, 8, 9, 10, 12]] = 1 - fb[[0, 2, 3, 8, 9, 10, 12]]
    terms = np.where(labels == "OB", (fb - fa) / 7, -(fb - fa) / 6)
    expected = permutation_test((fa, fb), lambda x, y, axis: delta(y, labels) - delta(x, labels),
                                permutation_type="samples", vectorized=True,
                                n_resamples=np.inf).pvalue
    assert signflip(terms) == pytest.approx(expected, rel=1e-9)


def test_signflip_draws_agree_with_the_exact_null(monkeypatch):
    labels = np.array(["OB"] * 40 + ["BB"] * 30)
    rng = np.random.default_rng(1)
    change = rng.choice([-1.0, 0.0, 0.0, 1.0], size=70)
    terms = np.where(labels == "OB", change / 40, -change / 30)
    exact = signflip(terms)
    monkeypatch.setattr(pm, "MAX_SUPPORT", 1)
    drawn = signflip(terms, n_resamples=40000, seed=2)
    assert drawn == pytest.approx(exact, abs=0.01) and drawn != exact


def macro_f1_of(y: np.ndarray):
    def stat(pred: np.ndarray) -> np.ndarray:
        pred = np.atleast_2d(pred)
        cm = np.zeros((len(pred), 3, 3))
        for r, p in enumerate(pred):
            np.add.at(cm[r], (y, p), 1)
        return confusion_rates(cm)["test/macro_f1"]
    return stat


def test_swap_test_matches_scipys_paired_permutation_exactly_on_a_small_case():
    rng = np.random.default_rng(7)
    y = np.tile([0, 1, 2], 5)                                          # 15 items
    pa = np.where(rng.random(15) < 0.7, y, rng.integers(0, 3, 15))
    pb = np.where(rng.random(15) < 0.4, y, rng.integers(0, 3, 15))
    stat = macro_f1_of(y)
    expected = permutation_test((pa, pb), lambda x, z, axis: stat(z) - stat(x),
                                permutation_type="samples", vectorized=True,
                                n_resamples=np.inf).pvalue
    assert (pa != pb).sum() >= 6
    assert swap_test(pa, pb, stat, n_resamples=10_000) == pytest.approx(expected, rel=1e-9)


def test_swap_test_random_swaps_agree_with_scipy():
    rng = np.random.default_rng(8)
    y = np.tile([0, 1, 2], 30)                                         # 90 items: random swaps
    pa = np.where(rng.random(90) < 0.75, y, rng.integers(0, 3, 90))
    pb = np.where(rng.random(90) < 0.6, y, rng.integers(0, 3, 90))
    stat = macro_f1_of(y)
    ours = swap_test(pa, pb, stat, n_resamples=4000, seed=0)
    theirs = permutation_test((pa, pb), lambda x, z, axis: stat(z) - stat(x),
                              permutation_type="samples", vectorized=True, n_resamples=4000,
                              rng=np.random.default_rng(0)).pvalue
    assert ours == pytest.approx(theirs, abs=0.03)
    assert swap_test(pa, pa, stat) == 1.0


def test_holm_matches_statsmodels_and_leaves_nan_out():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.049])
    assert np.allclose(holm(p), multipletests(p, method="holm")[1])
    with_nan = holm([0.01, np.nan, 0.04, 0.03])
    assert np.isnan(with_nan[1])
    assert np.allclose(with_nan[[0, 2, 3]], multipletests([0.01, 0.04, 0.03], method="holm")[1])


# ---- report.py runs=[A,B] paired=true ------------------------------------------------------
def detect_run(path: Path, flagged: list, pred: list | None = None, ids=None, labels=None
               ) -> Path:
    n = len(flagged)
    labels = labels or (["N", "OB", "BB"] * n)[:n]
    frame = pd.DataFrame({"id": ids or [f"d{i}" for i in range(n)], "label": labels,
                          "flagged": pd.array(flagged, dtype="boolean"),
                          "pred": pred or [None] * n})
    return write_run(path, "detect", {"detector": "regard"}, {}, {"trigger/TR_N": 0.0},
                     tables={"predictions.parquet": frame})


def report(tmp: Path, a: Path, b: Path, *overrides: str):
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.report import run

    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("report", overrides=[f"runs=[{a},{b}]", "bootstrap.n_resamples=0",
                                           f"paths.output_dir={tmp / 'rep'}", *overrides])
    return run(cfg)


def planted(tmp: Path) -> tuple[Path, Path]:
    """60 items per class; B stops flagging 30 BB dialogues that A flagged, nothing else."""
    n = 180
    labels = (["N", "OB", "BB"] * n)[:n]
    fa = [lab != "N" for lab in labels]
    fb = list(fa)
    bb = [i for i, lab in enumerate(labels) if lab == "BB"][:30]
    for i in bb:
        fb[i] = False
    pa = [lab for lab in labels]
    pb = ["N" if i in bb else lab for i, lab in enumerate(labels)]
    return (detect_run(tmp / "A", fa, pa, labels=labels),
            detect_run(tmp / "B", fb, pb, labels=labels))


def test_paired_report_finds_the_planted_change(tmp_path):
    a, b = planted(tmp_path)
    files = report(tmp_path, a, b, "paired=true")
    out = tmp_path / "rep"
    table = pd.read_csv(out / "paired.csv").set_index("metric")
    assert list(table.index) == ["trigger/TR_N", "trigger/TR_OB", "trigger/TR_BB",
                                 "trigger/delta_OB_BB", "test/macro_f1"]
    bb = table.loc["trigger/TR_BB"]
    assert (bb.a, bb.b, bb.discordant, bb.n_items) == (1.0, 0.5, 30, 60)
    assert bb.p_value == pytest.approx(mcnemar(30, 0)) and bool(bb.significant) and bool(bb.worse)
    assert table.loc["trigger/TR_OB", "p_value"] == 1.0
    assert not table.loc["trigger/TR_OB", "significant"]
    assert table.loc["trigger/delta_OB_BB", "difference"] == pytest.approx(0.5)
    assert table.loc["test/macro_f1", "significant"]
    assert np.allclose(table["p_holm"], multipletests(table["p_value"], method="holm")[1])
    flips = pd.read_csv(out / "paired_flips.csv")
    assert list(flips.columns) == ["id", "label", "verdict", "a", "b"]
    assert len(flips[flips.verdict == "flagged"]) == 30 and set(flips.label) == {"BB"}
    assert len(flips[flips.verdict == "pred"]) == 30
    assert files.gate == ()
    titles = [s.title for s in files.sections]
    assert titles[-1] == "Paired comparison"
    md = (out / "report.md").read_text()
    assert "Paired comparison" in md and "trigger/TR_BB" in md and "flagged → not flagged: 30" in md


def test_gate_lines_and_exit_code(tmp_path):
    a, b = planted(tmp_path)
    files = report(tmp_path, a, b, "gate=true")
    assert [line.split(":")[1].split()[0] for line in files.gate] == [
        "trigger/TR_BB", "trigger/delta_OB_BB", "test/macro_f1"]
    assert files.gate[0].startswith("gate: trigger/TR_BB worse: 1.000 → 0.500 (-0.500)")
    narrowed = report(tmp_path, a, b, "gate.metrics=[trigger/TR_OB]")
    assert narrowed.gate == ()
    improved = report(tmp_path, b, a, "gate.direction=worse")       # B→A is an improvement
    assert improved.gate == ()
    anyway = report(tmp_path, b, a, "gate.enabled=true")
    assert len(anyway.gate) == 3 and "changed" in anyway.gate[0]
    with pytest.raises(BenevauditError, match=r"gate.metrics: \['TR_BB'\] not compared here"):
        report(tmp_path, a, b, "gate.metrics=[TR_BB]")
    proc = subprocess.run([sys.executable, "report.py", f"runs=[{a},{b}]", "gate=true",
                           "bootstrap.n_resamples=0", f"hydra.run.dir={tmp_path / 'cli'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    gates = [line for line in proc.stderr.splitlines() if line.startswith("gate: ")]
    assert proc.returncode == 1 and len(gates) == 3, proc.stderr[-2000:]


def test_items_only_in_one_run_are_counted_and_no_overlap_is_refused(tmp_path):
    a = detect_run(tmp_path / "A", [True, False, True, False], ids=["x", "y", "z", "w"])
    b = detect_run(tmp_path / "B", [True, True, False], ids=["x", "y", "q"],
                   labels=["N", "OB", "N"])
    report(tmp_path, a, b, "paired=true")
    section = (tmp_path / "rep" / "report.md").read_text()
    assert "Items only in A: 2; only in B: 1" in section
    c = detect_run(tmp_path / "C", [True], ids=["other"])
    with pytest.raises(BenevauditError, match="share no item") as caught:
        report(tmp_path, a, c, "paired=true")
    assert "\n" not in str(caught.value)


def test_refusals(tmp_path):
    a = detect_run(tmp_path / "A", [True, False, True])
    b = detect_run(tmp_path / "B", [True, False, True], labels=["N", "OB", "N"])
    with pytest.raises(BenevauditError, match="another label"):
        report(tmp_path, a, b, "paired=true")
    with pytest.raises(BenevauditError, match="compares two runs"):
        report(tmp_path, a, tmp_path, "paired=true")              # a directory of two runs
    with pytest.raises(BenevauditError, match="significance.alph: unknown key in significance; "
                       "valid keys: alpha, n_resamples, seed"):
        report(tmp_path, a, a, "+significance.alph=0.1")
    with pytest.raises(BenevauditError, match="gate.metric: unknown key in gate"):
        report(tmp_path, a, a, "+gate.metric=[x]")
    with pytest.raises(BenevauditError, match="gate.direction='worst': expected"):
        report(tmp_path, a, a, "gate.direction=worst")


def test_cobia_runs_pair_by_item_and_method(tmp_path):
    def cobia(path: Path, bias: list[str]) -> Path:
        rows = pd.DataFrame({"id": ["i1", "i1", "i2", "i2", "i3", "i3"],
                             "method": ["hcc", "scc"] * 3, "category": ["c"] * 6,
                             "bias_verdict": bias,
                             "refusal_verdict": ["compliance"] * 6})
        return write_run(path, "probe", {"probe": "cobia"}, {}, {"cobia/n": 3.0},
                         tables={"responses.parquet": rows})

    a = cobia(tmp_path / "A", ["biased", "biased", "not_biased", "biased", "biased", None])
    b = cobia(tmp_path / "B", ["not_biased", "biased", "not_biased", "biased", "biased",
                               "biased"])
    report(tmp_path, a, b, "paired=true")
    table = pd.read_csv(tmp_path / "rep" / "paired.csv").set_index("metric")
    assert list(table.index) == ["cobia/bias_rate/hcc/bias/all", "cobia/bias_rate/scc/bias/all"]
    hcc = table.loc["cobia/bias_rate/hcc/bias/all"]
    assert (hcc.a, hcc.b, hcc.discordant) == (pytest.approx(2 / 3), pytest.approx(1 / 3), 1)
    assert table.loc["cobia/bias_rate/scc/bias/all", "n_items"] == 2     # an invalid verdict
    flips = pd.read_csv(tmp_path / "rep" / "paired_flips.csv")
    assert flips[["id", "method", "verdict", "a", "b"]].values.tolist() == [
        ["i1", "hcc", "bias", 1, 0]]


def test_fairmt_runs_pair_by_dialogue_per_task(tmp_path):
    def fairmt(path: Path, verdicts: list[str]) -> Path:
        rows = pd.DataFrame({"id": [f"f{i}" for i in range(6)],
                             "task": ["anaphora"] * 3 + ["scattered"] * 3, "verdict": verdicts})
        return write_run(path, "probe", {"probe": "fairmt"}, {}, {"fairmt/n_dialogues": 6.0},
                         tables={"responses.parquet": rows})

    a = fairmt(tmp_path / "A", ["biased", "not_biased", "invalid", "biased", "biased", "biased"])
    b = fairmt(tmp_path / "B", ["biased", "biased", "biased", "not_biased", "not_biased",
                                "biased"])
    files = report(tmp_path, a, b, "gate.direction=worse")
    table = pd.read_csv(tmp_path / "rep" / "paired.csv").set_index("metric")
    anaphora = table.loc["fairmt/anaphora/bias_rate"]
    assert (anaphora.n_items, anaphora.a, anaphora.b, anaphora.discordant) == (2, 0.5, 1.0, 1)
    assert bool(anaphora.worse) and not bool(table.loc["fairmt/scattered/bias_rate", "worse"])
    assert table.loc["fairmt/scattered/bias_rate", "p_value"] == pytest.approx(mcnemar(2, 0))
    assert files.gate == ()                      # nothing significant on six dialogues
