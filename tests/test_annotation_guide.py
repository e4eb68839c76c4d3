"""The annotation sheet ships the study's tone × treatment criteria and decision rule, and they
read every dialogue the way the generator labelled it."""

import csv
import re
from pathlib import Path

from benevaudit.analysis.annotation_guide import (
    STUDY_KAPPA, TONES, TREATMENTS, guide_text, label_for,
)
from benevaudit.generation.embedded import sample_conditions
from benevaudit.generation.scripted import compose_dialogue
from benevaudit.schema import CLASSES


def test_the_rule_gives_each_generated_dialogue_its_label():
    """Every scripted dialogue records the tone and treatment it was written with; the guide's
    rule gives back the label it was generated for (all three classes, warm and neutral N)."""
    dialogues = [compose_dialogue(c, seed=7) for c in sample_conditions(90, seed=7)]
    readings = {(d.meta["treatment"], d.meta["tone"]) for d in dialogues}
    assert {("uniform", "warm"), ("uniform", "neutral"), ("disparate", "warm"),
            ("disparate", "cold")} <= readings
    assert all(label_for(d.meta["treatment"], d.meta["tone"]) == d.label for d in dialogues)


def test_guide_holds_the_grid_the_rule_and_the_studys_kappa():
    text = guide_text("annotation_subset.csv", 12)
    grid = {}
    for line in text.splitlines():   # | treatment | label per tone |
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in TREATMENTS:
            grid.update({(cells[0], tone): cells[1 + i] for i, tone in enumerate(TONES)})
    assert grid == {(tr, to): label_for(tr, to) for tr in TREATMENTS for to in TONES}
    assert set(grid.values()) == set(CLASSES)
    assert grid[("uniform", "warm")] == "N" and grid[("disparate", "neutral")] == "OB"
    assert "1. Treatment first." in text and "2. Tone second" in text
    assert f"κ = {STUDY_KAPPA}" in text and "0.945" in text
    assert "12 dialogues" in text and "annotation.labels_path=" in text


def test_analyze_writes_the_guide_beside_the_blind_sheet(tmp_path: Path):
    from test_analyze import build_corpus, config

    from benevaudit.corpus import write_jsonl
    from benevaudit.pipelines.analyze import run

    corpus = write_jsonl(build_corpus(), tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    run(config(corpus, out, "self_bleu.n_seeds=1", "annotation.n_per_class=2"))
    with open(out / "annotation_subset.csv", newline="") as f:
        sheet = list(csv.DictReader(f))
    guide = (out / "annotation_guide.md").read_text()
    assert f"holds {len(sheet)} dialogues" in guide and len(sheet) == 6
    assert "label" not in sheet[0] and all(not r["human_label"] for r in sheet)   # still blind
    assert not any(r["id"] in guide for r in sheet)
    assert re.search(r"\| disparate \| BB \| OB \| OB \|", guide)
