"""CoBia's human validation as the paper reports it, on hand-computed cases: Fleiss' κ per
prompt group, each annotator's Cohen's κ with each judge averaged, the disagreement table, and
the blind annotation sheets. statsmodels' and scikit-learn's κ are independent checks here."""

import math

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as sm_fleiss

from benevaudit.errors import InputError
from benevaudit.metrics.agreement import mean_annotator_kappa, odd_one_out
from benevaudit.outputs.annotation_sheets import write_sheets
from benevaudit.probes.cobia.human import read_annotations
from benevaudit.probes.cobia.validation import human_validation

B, N = "biased", "not_biased"
KINDS = {"bias": "bias", "nli": "nli", "guard": "guard", "refusal": "refusal"}
# hcc items 1-4 by annotators a, b, c; scc items 5-8 by d and e (the two prompt groups' people)
NOTES = {("1", "hcc"): {"a": B, "b": B, "c": B}, ("2", "hcc"): {"a": B, "b": B, "c": N},
         ("3", "hcc"): {"a": N, "b": N, "c": N}, ("4", "hcc"): {"a": N, "b": B, "c": N},
         ("5", "scc"): {"d": B, "e": B}, ("6", "scc"): {"d": N, "e": N},
         ("7", "scc"): {"d": B, "e": N}, ("8", "scc"): {"d": N, "e": N}}
# judge verdicts per item: bias, nli, guard (True: biased)
JUDGED = {"1": (True, True, False), "2": (True, False, False), "3": (False, False, False),
          "4": (False, True, True), "5": (True, True, True), "6": (False, False, False),
          "7": (False, True, False), "8": (False, False, False)}


def rows() -> list[dict]:
    out = []
    for (item, method) in NOTES:
        bias, nli, guard = JUDGED[item]
        out.append({"id": item, "method": method, "bias_verdict": B if bias else N,
                    "nli_verdict": "agrees" if nli else "negates",
                    "guard_verdict": "yes" if guard else "no", "refusal_verdict": "compliance"})
    return out


def test_fleiss_kappa_per_prompt_group_by_hand():
    """hcc: counts [3,0] [2,1] [0,3] [1,2], P̄ = 2/3, P_e = 1/2: κ = 1/3.
    scc: counts [2,0] [0,2] [1,1] [0,2], P̄ = 3/4, P_e = (3/8)² + (5/8)² = 17/32: κ = 7/15."""
    metrics, _ = human_validation(rows(), KINDS, NOTES)
    assert metrics["cobia/fleiss_kappa/humans/hcc"] == pytest.approx(1 / 3)
    assert metrics["cobia/fleiss_kappa/humans/scc"] == pytest.approx(7 / 15)
    assert "cobia/fleiss_kappa/humans" not in metrics       # the groups' people differ: no pool
    for group in ("hcc", "scc"):
        people = [list(v.values()) for k, v in NOTES.items() if k[1] == group]
        table, _ = aggregate_raters([[p == B for p in row] for row in people])
        assert metrics[f"cobia/fleiss_kappa/humans/{group}"] == pytest.approx(
            sm_fleiss(table, method="fleiss"))
    assert metrics["cobia/human/items/hcc"] == 4 and metrics["cobia/human/items"] == 8


def test_each_annotators_kappa_with_a_judge_averaged_by_hand():
    """The bias judge on hcc says B B N N. a: B B N N, κ 1; b: B B N B, p_o 3/4, p_e 1/2,
    κ 1/2; c: B N N N, p_o 3/4, p_e 1/2, κ 1/2: the mean is 2/3."""
    metrics, _ = human_validation(rows(), KINDS, NOTES)
    assert metrics["cobia/mean_cohen_kappa/bias__annotators/hcc"] == pytest.approx(2 / 3)
    judge = {str(i): (B if JUDGED[str(i)][0] else N) for i in range(1, 5)}
    marks = {a: {k[0]: v[a] for k, v in NOTES.items() if a in v} for a in "abc"}
    mean, each = mean_annotator_kappa(marks, judge, (B, N))
    assert each == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.5}) and mean == pytest.approx(2 / 3)
    for a, labels in marks.items():
        items = sorted(labels)
        assert each[a] == pytest.approx(cohen_kappa_score([labels[i] for i in items],
                                                          [judge[i] for i in items]))
    # scc: the bias judge says B N N N; d B N B N: p_o 3/4, p_e 1/2, κ 1/2; e B N N N: κ 1
    assert metrics["cobia/mean_cohen_kappa/bias__annotators/scc"] == pytest.approx(3 / 4)
    assert "cobia/mean_cohen_kappa/refusal__annotators" not in metrics
    # a judge with no valid verdict on an annotator's items gives that annotator no κ
    assert math.isnan(mean_annotator_kappa({"a": {"1": B}}, {"1": None}, (B, N))[0])


def test_the_disagreement_table_by_hand():
    """Item 1: guard alone says no, people 3 of 3 biased: with the pair. Item 2: bias alone
    says biased, people 2 of 3: with the odd judge. Item 4: bias alone says not biased, people
    1 of 3: with the odd judge. Item 7: nli alone, people 1 of 2: a tie. 3, 5, 6, 8: all agree."""
    metrics, table = human_validation(rows(), KINDS, NOTES)
    assert table.values.tolist() == [
        ["1", "hcc", "guard", N, 3, 3, "pair"], ["2", "hcc", "bias", B, 2, 3, "odd"],
        ["4", "hcc", "bias", N, 1, 3, "odd"], ["7", "scc", "nli", B, 1, 2, "tie"]]
    assert metrics["cobia/disagreement/bias/items"] == 2
    assert metrics["cobia/disagreement/bias/humans_with_odd"] == 2
    assert metrics["cobia/disagreement/guard/humans_with_pair"] == 1
    assert metrics["cobia/disagreement/nli/humans_with_odd"] == 0
    assert metrics["cobia/disagreement/nli/humans_with_pair"] == 0
    with pytest.raises(ValueError, match="three judges"):
        odd_one_out({"a": {}, "b": {}}, {})
    # an invalid verdict leaves the item out
    assert odd_one_out({"x": {"i": True}, "y": {"i": None}, "z": {"i": False}}, {"i": [True]}) == []


def test_blind_sheets_per_prompt_group_are_seeded_and_read_back(tmp_path):
    pool = [{"id": f"i{k}", "method": m, "group": "Zorbians", "descriptor": f"lazy{k}",
             "rated_response": f"reply {m} {k}", "response": f"[🔒CLASSIC] reply {m} {k}",
             "bias_verdict": B} for m in ("hcc", "scc", "roleplay") for k in range(40)]
    sizes = write_sheets(pool, tmp_path / "a", 30, seed=7, groups=["hcc", "scc"], grouping="method")
    assert sizes == {"hcc": 30, "scc": 30}
    sheet = pd.read_csv(tmp_path / "a" / "sheet_1.csv", keep_default_na=False)
    assert list(sheet.columns) == ["sheet_item", "opinion", "output", "label"]  # blind
    assert sheet["output"].str.startswith("reply hcc").all() and sheet["output"].nunique() == 30
    assert sheet["opinion"].str.match(r"Zorbians are lazy\d+\.").all()
    key = pd.read_csv(tmp_path / "a" / "key.csv", dtype=str)
    assert len(key) == 60 and set(key["prompt_group"]) == {"hcc", "scc"}
    write_sheets(pool, tmp_path / "b", 30, seed=7, groups=["hcc", "scc"], grouping="method")
    again = pd.read_csv(tmp_path / "b" / "sheet_1.csv", keep_default_na=False)
    assert again.equals(sheet)                                  # seeded
    write_sheets(pool, tmp_path / "c", 30, seed=8, groups=["hcc", "scc"], grouping="method")
    other = pd.read_csv(tmp_path / "c" / "sheet_1.csv", keep_default_na=False)
    assert list(other["output"]) != list(sheet["output"])
    filled = sheet.drop(columns=["label"]).assign(ann1=B, ann2=[B, N] * 15)
    filled.to_csv(tmp_path / "a" / "filled.csv", index=False)
    notes = read_annotations(tmp_path / "a" / "filled.csv")
    first = key[key["sheet_item"] == sheet["sheet_item"][1]].iloc[0]
    assert notes[(first["id"], "hcc")] == {"ann1": B, "ann2": N}
    assert len(notes) == 30 and all(k[1] == "hcc" for k in notes)


def test_labels_that_say_nothing_or_label_one_output_twice_fail_naming_the_lines(tmp_path):
    sheet = tmp_path / "labels.csv"
    rows = {"id": ["a", "b", "a"], "method": ["hcc", "hcc", "hcc"],
            "ann1": ["biased", "not_biased", "not_biased"]}
    pd.DataFrame(rows).to_csv(sheet, index=False)
    with pytest.raises(InputError, match=r"labels.csv: lines 2 and 4 label the same output"):
        read_annotations(sheet)
    pd.DataFrame({**rows, "ann1": ["", "", ""]}).to_csv(sheet, index=False)
    with pytest.raises(InputError, match=r"labels.csv: no row holds a label") as err:
        read_annotations(sheet)
    assert "\n" not in str(err.value)
    filled = tmp_path / "filled.csv"
    pd.DataFrame({"sheet_item": ["1-001"], "ann1": ["biased"]}).to_csv(filled, index=False)
    pd.DataFrame({"sheet_item": ["1-002", "1-001", "1-001"], "id": ["x", "y", "z"],
                  "method": "hcc"}).to_csv(tmp_path / "key.csv", index=False)
    with pytest.raises(InputError, match=r"key.csv: lines 3 and 4 key the same sheet_item"):
        read_annotations(filled)


def test_a_probe_run_writes_sheets_and_the_validation(tmp_path):
    from test_cobia_pipeline import SCRIPTED, probe_config, scripted_judges

    from benevaudit.pipelines.probe import run

    judges = scripted_judges("[Biased,Unbiased]", "[Agrees]", "['<score> no </score>']",
                             "[Compliance]")
    run(probe_config(tmp_path, "cobia", "limit=3", "probe.annotation.size=2",
                     "probe.annotation.grouping=method", *SCRIPTED, *judges))
    folder = tmp_path / "run" / "annotation"
    assert len(pd.read_csv(folder / "sheet_1.csv")) == 2 == len(pd.read_csv(folder / "sheet_2.csv"))
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    labels = frame[frame["method"].isin(["hcc", "scc"])][["id", "method"]].assign(
        p1=B, p2=[B, N] * 3)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    metrics = run(probe_config(tmp_path, "cobia", "limit=3", f"probe.human_labels={tmp_path}/"
                               "labels.csv", "probe.annotation.grouping=method", *SCRIPTED,
                               *judges))
    assert metrics["cobia/human/items/hcc"] == 3 and "cobia/fleiss_kappa/humans/scc" in metrics
    table = pd.read_csv(tmp_path / "run" / "human_disagreement.csv")
    assert list(table.columns) == ["id", "method", "odd_judge", "odd_verdict", "biased_votes",
                                   "annotators", "humans_sided_with"]
