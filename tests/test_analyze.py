"""End to end: ``analyze.py`` on a small corpus whose classes differ in known ways."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from benevaudit.corpus import write_jsonl
from benevaudit.metrics.linguistic import MARKER_NAMES
from benevaudit.schema import CLASSES, Dialogue, Turn

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["sleep", "stress", "diet", "walking", "work", "family", "money", "pain", "mood", "pets"]


def agent_turn(label: str, rng: np.random.Generator) -> str:
    """N asks and offers options; OB is curt and directive; BB is warm, protective and long."""
    a, b = rng.choice(TOPICS, size=2, replace=False)
    # optional words and endings, so that no marker is constant within a class
    extra = " right now" if rng.random() < 0.5 else ""
    end = "." if rng.random() < 0.3 else {"N": "?", "OB": ".", "BB": "!"}[label]
    if label == "N":
        return (f"What matters most to you about {a}{extra}? We could look at {b} or at {a}, "
                f"and you can choose what fits your plans. Tell me which you like{end}")
    if label == "OB":
        return f"You should stop worrying about {a}{extra}. Do less {b}. That is enough."
    return (f"Oh sweetie, don't worry about {a}{extra} at all! You're doing wonderful, truly "
            f"amazing. Let's not push too hard with {b}, okay? Take it easy, dear, and leave "
            f"the {a} plans to me{end}")


def build_corpus(n_per_cell: int = 10, seed: int = 0) -> list[Dialogue]:
    rng = np.random.default_rng(seed)
    user = {"age": "elder", "gender": "female", "race": "Latino", "ability": "none"}
    out = []
    for gen in ("gen-a", "gen-b"):
        for label in CLASSES:
            for i in range(n_per_cell):
                turns = []
                for _ in range(3):
                    turns.append(Turn("user", f"I have a question about {rng.choice(TOPICS)}."))
                    turns.append(Turn("agent", agent_turn(label, rng)))
                out.append(Dialogue(f"{gen}-{label}-{i}", label, "health_lifestyle", gen, user,
                                    None, tuple(turns)))
    return out


def config(corpus: Path, out: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("analyze", overrides=[
            f"data.path={corpus}", f"paths.root_dir={out}", f"paths.output_dir={out}",
            "progress=false", "vendi.embedder=none", "self_bleu.n_seeds=2",
            "self_bleu.n_hypotheses=5", "self_bleu.n_references=4", "annotation.n_per_class=4",
            *overrides])


@pytest.fixture
def corpus_path(tmp_path: Path) -> Path:
    return write_jsonl(build_corpus(), tmp_path / "corpus.jsonl")


def test_run_writes_contract_files_and_finds_planted_differences(corpus_path, tmp_path):
    from benevaudit.pipelines.analyze import run

    out = tmp_path / "run"
    metrics = run(config(corpus_path, out))
    on_disk = json.loads((out / "metrics.json").read_text())
    assert set(on_disk) == set(metrics)
    assert all(on_disk[k] == pytest.approx(v) for k, v in metrics.items() if math.isfinite(v))
    for cls in ("OB", "BB"):
        assert {f"analysis/d_{cls}_vs_N/{m}" for m in MARKER_NAMES} <= set(metrics)
    d = lambda cls, m: metrics[f"analysis/d_{cls}_vs_N/{m}"]  # noqa: E731
    assert d("OB", "sentence_length") < 0 and d("BB", "sentence_length") < 0  # the study's signs
    assert d("OB", "question_rate") < 0
    assert d("BB", "exclamation_rate") > 0 and d("BB", "turn_length") > 0
    assert d("BB", "endearment_rate") > 0 and d("BB", "reassurance_rate") > 0
    assert d("BB", "praise_rate") > 0 and d("OB", "directive_rate") > 0
    assert metrics["analysis/n_dialogues"] == 60
    assert metrics["analysis/n_messages"] == 360 and metrics["analysis/mean_turns"] == 6.0
    assert all(metrics[f"analysis/n_{c}"] == 20 for c in CLASSES)
    assert all(metrics[f"analysis/share_{c}"] == pytest.approx(1 / 3) for c in CLASSES)
    for gen in ("gen-a", "gen-b"):
        for cls in CLASSES:
            assert 0.0 < metrics[f"analysis/self_bleu/{gen}/{cls}"] <= 100.0  # the study's scale
            assert f"analysis/vendi/{gen}/{cls}" not in metrics  # vendi.embedder=none
    assert max(metrics[f"analysis/self_bleu/gen-a/{c}"] for c in CLASSES) > 1.0  # not a fraction
    for cls in CLASSES:  # the study's figure: each class's mean over the generators
        assert metrics[f"analysis/self_bleu/mean/{cls}"] == pytest.approx(
            (metrics[f"analysis/self_bleu/gen-a/{cls}"]
             + metrics[f"analysis/self_bleu/gen-b/{cls}"]) / 2)
    with open(out / "diversity_by_class.csv", newline="") as f:
        by_class = {r["class"]: r for r in csv.DictReader(f)}
    assert float(by_class["OB"]["self_bleu"]) == pytest.approx(
        metrics["analysis/self_bleu/mean/OB"]) and by_class["OB"]["n_generators"] == "2"
    # OB reuses a short template with little to vary: the least diverse class
    assert metrics["analysis/mtld_mean_OB"] < metrics["analysis/mtld_mean_N"]
    for name in ("markers.csv", "marker_effects.csv", "diversity.csv", "marker_effects.png",
                 "mtld_by_class.png", "annotation_subset.csv", "annotation_key.csv"):
        assert (out / name).stat().st_size > 0, name
    with open(out / "markers.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 60 and {"id", "label", "mtld", *MARKER_NAMES} <= set(rows[0])
    with open(out / "annotation_subset.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 12


@pytest.mark.parametrize("override, message", [
    ("vendi.embedder=nonsense", "vendi.embedder='nonsense'.*minilm, tiny, none"),
    ("mtld.speaker=bot", r"mtld.speaker='bot': expected one of \['all', 'agent', 'user'\]"),
    ("self_bleu.smooth=floor", r"self_bleu.smooth='floor': expected one of \['exp', 'none'\]"),
    ("markers.reference=X", r"markers.reference='X': expected one of \['N', 'OB', 'BB'\]"),
])
def test_bad_options_fail_before_reading_the_corpus(tmp_path, override: str, message: str):
    from benevaudit.pipelines.analyze import run

    with pytest.raises(ValueError, match=message):
        run(config(tmp_path / "missing.jsonl", tmp_path, override))


def test_vendi_per_cell_with_tiny_embedder_and_kappa_of_returned_labels(corpus_path, tmp_path):
    from benevaudit.pipelines.analyze import run

    labels = tmp_path / "labels.csv"
    ids = [f"gen-a-{c}-{i}" for c in CLASSES for i in range(4)]
    human = ["N"] * 4 + ["OB"] * 3 + ["BB"] + ["BB"] * 4  # one OB read as BB
    labels.write_text("id,human_label\n" + "".join(f"{i},{h}\n" for i, h in zip(ids, human)))
    out = tmp_path / "run"
    metrics = run(config(corpus_path, out, "vendi.embedder=tiny", "vendi.max_per_cell=6",
                         "vendi.max_length=64", f"annotation.labels_path={labels}"))
    # 12 pairs, one disagreement: p_o = 11/12, p_e = 1/3 -> κ = (11/12 - 1/3) / (2/3) = 0.875
    assert metrics["analysis/kappa"] == pytest.approx(0.875)
    assert metrics["analysis/kappa_n"] == 12
    for gen in ("gen-a", "gen-b"):
        for cls in CLASSES:
            assert 1.0 <= metrics[f"analysis/vendi/{gen}/{cls}"] <= 6.0  # 6 dialogues a cell
    for cls in CLASSES:
        assert metrics[f"analysis/vendi/mean/{cls}"] == pytest.approx(
            (metrics[f"analysis/vendi/gen-a/{cls}"] + metrics[f"analysis/vendi/gen-b/{cls}"]) / 2)
    with open(out / "annotation_confusion.csv", newline="") as f:
        table = {r["label"]: r for r in csv.DictReader(f)}
    assert table["OB"]["human_BB"] == "1" and table["N"]["human_N"] == "4"
    with open(out / "diversity.csv", newline="") as f:
        assert {r["vendi_n"] for r in csv.DictReader(f)} == {"6"}


def test_cli_entrypoint_writes_into_the_hydra_run_dir(corpus_path, tmp_path):
    out = tmp_path / "cli"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "analyze.py"), f"data.path={corpus_path}",
         f"hydra.run.dir={out}", "progress=false", "vendi.embedder=none", "self_bleu.n_seeds=1",
         "self_bleu.n_hypotheses=3", "self_bleu.n_references=3", "annotation.n_per_class=2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["analysis/n_dialogues"] == 60 and "analysis/kappa" not in metrics
    assert (out / ".hydra" / "config.yaml").is_file() and (out / "marker_effects.png").is_file()
    assert not (tmp_path / "outputs").exists()  # nothing written outside the run directory


def test_missing_corpus_path_is_reported(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "analyze.py"), f"hydra.run.dir={tmp_path}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "data.path" in proc.stderr


def test_embedded_scripted_sample_runs_without_a_path(tmp_path):
    """data=tiny: the scripted stand-in corpus, written to the cache, with the study's signs for
    the markers the scripted phrase banks plant (BB: more exclamations; OB: shorter turns)."""
    from benevaudit.pipelines.analyze import run

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("analyze", overrides=[
            "data=tiny", f"paths.root_dir={tmp_path}", f"paths.output_dir={tmp_path / 'run'}",
            "progress=false", "vendi.embedder=none", "self_bleu.n_seeds=1",
            "self_bleu.n_hypotheses=5", "self_bleu.n_references=5"])
    metrics = run(cfg)
    assert metrics["analysis/n_dialogues"] == cfg.data.size
    assert metrics["analysis/d_BB_vs_N/exclamation_rate"] > 0
    assert metrics["analysis/d_OB_vs_N/turn_length"] < 0
    assert any(k.startswith("analysis/self_bleu/scripted-") for k in metrics)


def test_corpus_size_as_table_2_gives_it():
    """Dialogues, messages, mean turns and class balance, on an unbalanced hand-made corpus."""
    from benevaudit.analysis.markers import corpus_size

    user = {"age": "elder", "gender": "female", "race": "Latino", "ability": "none"}
    pair = (Turn("user", "Hi."), Turn("agent", "Hello."))
    dialogues = [Dialogue(f"n{i}", "N", "health_lifestyle", "g", user, None, pair)
                 for i in range(3)]
    dialogues.append(Dialogue("ob", "OB", "health_lifestyle", "g", user, None, pair * 3))
    size = corpus_size(dialogues)
    assert size == {"analysis/n_dialogues": 4.0, "analysis/n_messages": 12.0,
                    "analysis/mean_turns": 3.0, "analysis/n_N": 3.0, "analysis/share_N": 0.75,
                    "analysis/n_OB": 1.0, "analysis/share_OB": 0.25, "analysis/n_BB": 0.0,
                    "analysis/share_BB": 0.0}
