"""CoBia's human validation grouped as the paper groups its annotators: by judge prompt (the
bias judge's question against the NLI judge's), not by attack method; the method grouping
stays as ``probe.annotation.grouping=method``. Hand-computed κ, the sheets, the label files,
and what the release allows recomputing (it ships no human labels)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from benevaudit.errors import ConfigError, InputError
from benevaudit.outputs.annotation_sheets import write_sheets
from benevaudit.probes.cobia.human import (QUESTIONS, annotation_sheets, check_groups,
                                           read_labelled)
from benevaudit.probes.cobia.validation import human_validation
from benevaudit.probes.spec import AnnotationSpec
from conftest import shared_data

B, N = "biased", "not_biased"
KINDS = {"bias": "bias", "nli": "nli", "guard": "guard", "refusal": "refusal"}
METHOD = {"1": "hcc", "2": "scc", "3": "hcc", "4": "scc", "5": "hcc", "6": "scc"}
# a, b, c answered the bias judge's question on items 1-4; d, e the NLI judge's on 3-6
BIAS_GROUP = {"1": (B, B, B), "2": (B, B, N), "3": (N, N, N), "4": (N, B, N)}
NLI_GROUP = {"3": (B, B), "4": (N, N), "5": (B, N), "6": (N, N)}
GROUPS = {"a": "bias", "b": "bias", "c": "bias", "d": "nli", "e": "nli"}
BIAS_JUDGE = {"1": B, "2": B, "3": N, "4": N, "5": B, "6": N}


def notes() -> dict[tuple[str, str], dict[str, str]]:
    out: dict[tuple[str, str], dict[str, str]] = {}
    for group, people in ((BIAS_GROUP, "abc"), (NLI_GROUP, "de")):
        for item, labels in group.items():
            out.setdefault((item, METHOD[item]), {}).update(zip(people, labels, strict=True))
    return out


def rows() -> list[dict]:
    return [{"id": i, "method": m, "bias_verdict": BIAS_JUDGE[i], "nli_verdict": "neutral",
             "guard_verdict": "no", "refusal_verdict": "compliance"} for i, m in METHOD.items()]


def test_fleiss_and_each_annotators_kappa_per_judge_prompt_by_hand() -> None:
    """bias: counts [3,0] [2,1] [0,3] [1,2], P̄ 2/3, P_e 1/2: κ 1/3. nli: [2,0] [0,2] [1,1]
    [0,2], P̄ 3/4, P_e 17/32: κ 7/15. The bias judge on 1-4 says B B N N: a κ 1, b and c
    κ 1/2, mean 2/3; on 3-6 N N B N: d B N B N κ 1/2, e B N N N p_o 1/2, p_e 5/8, κ -1/3,
    mean 1/12."""
    metrics, _ = human_validation(rows(), KINDS, notes(), GROUPS)
    assert metrics["cobia/fleiss_kappa/humans/bias"] == pytest.approx(1 / 3)
    assert metrics["cobia/fleiss_kappa/humans/nli"] == pytest.approx(7 / 15)
    assert metrics["cobia/human/items/bias"] == 4 == metrics["cobia/human/items/nli"]
    assert metrics["cobia/human/items"] == 6
    assert metrics["cobia/mean_cohen_kappa/bias__annotators/bias"] == pytest.approx(2 / 3)
    assert metrics["cobia/mean_cohen_kappa/bias__annotators/nli"] == pytest.approx(1 / 12)
    for person, labels, items in (("d", [B, N, B, N], "3456"), ("e", [B, N, N, N], "3456")):
        assert cohen_kappa_score(labels, [BIAS_JUDGE[i] for i in items]) == pytest.approx(
            0.5 if person == "d" else -1 / 3)
    assert not any(k.endswith(("/hcc", "/scc")) for k in metrics)
    # the method grouping of the same labels mixes the two groups' people: hcc's only item
    # every hcc annotator labelled is 3, one item, so its Fleiss' κ is not the groups'
    by_method, _ = human_validation(rows(), KINDS, notes())
    assert "cobia/fleiss_kappa/humans/bias" not in by_method
    assert by_method["cobia/human/items/hcc"] == 3


def labels_csv(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_labels_file_names_each_rows_prompt_group(tmp_path: Path) -> None:
    sheet = labels_csv(tmp_path / "l.csv", [
        {"id": "3", "method": "hcc", "prompt_group": "bias", "a": B, "d": ""},
        {"id": "3", "method": "hcc", "prompt_group": "nli", "a": "", "d": "agrees"},
        {"id": "4", "method": "scc", "prompt_group": "nli", "a": "", "d": "negates"}])
    read = read_labelled(sheet)
    assert read.notes == {("3", "hcc"): {"a": B, "d": B}, ("4", "scc"): {"d": N}}
    assert read.groups == {"a": "bias", "d": "nli"}
    check_groups(read, str(sheet), "judge_prompt")
    twice = labels_csv(tmp_path / "t.csv", [
        {"id": "3", "method": "hcc", "prompt_group": "bias", "a": B},
        {"id": "4", "method": "scc", "prompt_group": "nli", "a": N}])
    with pytest.raises(InputError, match=r"t.csv:3: annotator 'a' labels prompt group 'nli' "
                                         r"here and 'bias' above"):
        read_labelled(twice)
    again = labels_csv(tmp_path / "r.csv", [
        {"id": "3", "method": "hcc", "prompt_group": "bias", "a": B},
        {"id": "3", "method": "hcc", "prompt_group": "bias", "a": N}])
    with pytest.raises(InputError, match=r"r.csv: lines 2 and 3 label the same output"):
        read_labelled(again)


def test_a_file_without_prompt_groups_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    old = labels_csv(tmp_path / "old.csv", [{"id": "1", "method": "hcc", "a": B}])
    read = read_labelled(old)
    with pytest.raises(InputError, match=r"old.csv: no prompt_group for annotators \['a'\]; .*"
                                         r"add a prompt_group column \(bias or nli\), or set "
                                         r"probe.annotation.grouping=method") as err:
        check_groups(read, str(old), "judge_prompt")
    assert "\n" not in str(err.value)
    check_groups(read, str(old), "method")           # read as before
    methods = labels_csv(tmp_path / "m.csv", [{"id": "1", "method": "hcc",
                                               "prompt_group": "hcc", "a": B}])
    with pytest.raises(InputError, match=r"prompt_group \['hcc'\]: expected bias or nli"):
        check_groups(read_labelled(methods), str(methods), "judge_prompt")


def test_the_spec_knows_each_groupings_groups() -> None:
    spec = AnnotationSpec(size=300, grouping="judge_prompt", groups=None)
    assert spec.group_names() == ["bias", "nli"]
    assert AnnotationSpec(size=None, grouping="method", groups=None).group_names() == [
        "hcc", "scc"]
    with pytest.raises(ConfigError, match=r"groups: \['hcc'\] are not groups of "
                                          r"grouping=judge_prompt; expected some of"):
        AnnotationSpec.of({"size": 1, "grouping": "judge_prompt", "groups": ["hcc"]},
                          "probe.annotation")


def test_judge_prompt_sheets_draw_disjoint_samples_of_every_output(tmp_path: Path) -> None:
    pool = [{"id": f"i{k}", "method": m, "group": "Zorbians", "descriptor": f"lazy{k}",
             "rated_response": f"reply {m} {k}"} for m in ("hcc", "scc", "roleplay")
            for k in range(20)]
    sizes = write_sheets(pool, tmp_path / "a", 25, seed=7, groups=["bias", "nli"],
                         grouping="judge_prompt")
    assert sizes == {"bias": 25, "nli": 25}
    first, second = (pd.read_csv(tmp_path / "a" / f"sheet_{n}.csv", keep_default_na=False)
                     for n in (1, 2))
    assert list(first.columns) == ["sheet_item", "opinion", "output", "question", "label"]
    assert set(first["question"]) == {QUESTIONS["bias"]}
    assert set(second["question"]) == {QUESTIONS["nli"]}
    assert not set(first["output"]) & set(second["output"])          # no output twice
    key = pd.read_csv(tmp_path / "a" / "key.csv", dtype=str)
    assert len(key) == 50 and set(key["prompt_group"]) == {"bias", "nli"}
    assert set(key["method"]) == {"hcc", "scc", "roleplay"}           # every method's outputs
    filled = pd.concat([first, second]).drop(columns=["label", "question"]).assign(
        ann1=[B] * 25 + [""] * 25, ann2=[""] * 25 + ["neutral"] * 25)
    filled.to_csv(tmp_path / "a" / "filled.csv", index=False)
    read = read_labelled(tmp_path / "a" / "filled.csv")
    assert read.groups == {"ann1": "bias", "ann2": "nli"} and len(read.notes) == 50


def test_sheets_made_in_memory_are_the_files_a_probe_run_writes(tmp_path: Path) -> None:
    """The sheets as values: the same bytes whether written where they are made or by
    ``probe.py`` with the run's other files (``annotation/`` among the result's tables)."""
    from benevaudit.pipelines.probe import write_run
    from benevaudit.probes.base import ProbeResult

    pool = [{"id": f"i{k}", "method": m, "group": "Zorbians", "descriptor": f"lazy, {k}",
             "rated_response": f'reply "{m}"\n{k}'} for m in ("hcc", "scc") for k in range(6)]
    made = annotation_sheets(pool, 4, 7, ["bias", "nli"], "judge_prompt")
    assert made.sizes == {"bias": 4, "nli": 4} and not list(tmp_path.iterdir())
    assert list(made.files()) == ["sheet_1.csv", "sheet_2.csv", "key.csv"]
    assert made.files()["key.csv"].splitlines()[0] == "sheet_item,prompt_group,id,method"
    assert write_sheets(pool, tmp_path / "here", 4, 7, ["bias", "nli"],
                        "judge_prompt") == made.sizes
    (tmp_path / "run").mkdir()                  # the run directory Hydra makes
    write_run(tmp_path / "run", ProbeResult([], {}, tables={
        f"annotation/{name}": text for name, text in made.files().items()}))
    for name, text in made.files().items():
        assert (tmp_path / "run" / "annotation" / name).read_bytes() == text.encode()
        assert (tmp_path / "here" / name).read_bytes() == text.encode()


def test_a_probe_run_groups_its_annotators_by_judge_prompt(tmp_path: Path) -> None:
    from test_cobia_pipeline import SCRIPTED, probe_config, scripted_judges

    from benevaudit.pipelines.probe import run

    judges = scripted_judges("[Biased,Unbiased]", "[Agrees]", "['<score> no </score>']",
                             "[Compliance]")
    run(probe_config(tmp_path, "cobia", "limit=3", "probe.annotation.size=4", *SCRIPTED, *judges))
    key = pd.read_csv(tmp_path / "run" / "annotation" / "key.csv", dtype=str)
    assert list(key["prompt_group"]) == ["bias"] * 4 + ["nli"] * 4
    frame = pd.read_parquet(tmp_path / "run" / "responses.parquet")[["id", "method"]]
    half = len(frame) // 2
    labels = pd.concat([frame[:half].assign(prompt_group="bias", p1=B, p2=N),
                        frame[half:].assign(prompt_group="nli", p3=B, p4=B)])
    labels.to_csv(tmp_path / "labels.csv", index=False)
    metrics = run(probe_config(tmp_path, "cobia", "limit=3",
                               f"probe.human_labels={tmp_path}/labels.csv", *SCRIPTED, *judges))
    assert metrics["cobia/human/items/bias"] == half
    assert metrics["cobia/human/items/nli"] == len(frame) - half
    assert metrics["cobia/fleiss_kappa/humans/bias"] == pytest.approx(-1.0)   # always apart
    assert metrics["cobia/human/items"] == len(frame)


@pytest.mark.data
def test_the_release_ships_no_human_labels_to_recompute_the_papers_figures() -> None:
    """The paper's Fleiss' κ (0.54, 0.55) and its κ with Granite (0.10) need the annotators'
    labels; the release holds prompts, judges and data only, so the figures cannot be
    recomputed from it (docs/guides/cobia.md says so)."""
    release = shared_data("cobia-release", ("judges/bias-judge.ipynb",), "the CoBia repository")
    kinds = {p.suffix for p in release.rglob("*") if p.is_file()}
    assert kinds <= {".json", ".ipynb", ".md", ""}                   # README, LICENSE
    assert not any("annotat" in p.name.lower() or "human" in p.name.lower()
                   for p in release.rglob("*"))
