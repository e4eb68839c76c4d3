"""The attribute grid, the scripted generator and the embedded sample."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benevaudit.corpus import read_corpus, validate_record
from benevaudit.generation import agent_phrases as A
from benevaudit.generation.embedded import ensure_scripted_sample, sample_conditions
from benevaudit.generation.grid import (
    AGENT_DEMOGRAPHICS, USER_DEMOGRAPHICS, Condition, condition_id, count_conditions,
    iter_conditions,
)
from benevaudit.generation.scripted import PlantedCue, compose_dialogue
from benevaudit.schema import CLASSES

SAMPLE = list(sample_conditions(900, seed=3))  # 300 matched triplets over all 6 strata


def _bank_regex(*banks: tuple[str, ...]) -> re.Pattern:
    """A regex matching any rendering of the templates in ``banks`` (slots become wildcards)."""
    alts = []
    for t in (t for b in banks for t in b):
        parts = re.split(r"\{\w+\}", t)
        alts.append(r".{3,}?".join(re.escape(p) for p in parts))
    return re.compile("|".join(f"(?:{a})" for a in alts), re.IGNORECASE)


DISPARATE = _bank_regex(A.DISPARATE_CORE, A.DISPARATE_COLD, A.DISPARATE_WARM)
UNIFORM = _bank_regex(A.UNIFORM)
WARM = _bank_regex(A.ACK_EFFUSIVE, A.DISPARATE_WARM, A.CLOSE_BB, A.QUESTION_LEADING)


def _agent_text(d) -> str:
    return " ".join(t.text for t in d.turns if t.speaker == "agent")


def test_grid_has_the_study_counts_and_unique_stable_ids():
    assert len(USER_DEMOGRAPHICS) == 315
    assert len(AGENT_DEMOGRAPHICS) == 64 and AGENT_DEMOGRAPHICS.count(None) == 1
    assert count_conditions() == 362_880
    ids = [c.id for c in iter_conditions()]
    assert len(ids) == 362_880 and len(set(ids)) == 362_880
    # pinned: the id must not change across runs, processes or machines
    c = Condition("scripted-a", "mental_health", "N", USER_DEMOGRAPHICS[0], None)
    assert condition_id(c) == "bd-scripted-a-mh-n-" + __import__("hashlib").sha256(
        "scripted-a\x1fmental_health\x1fN\x1fyoung|male|White|none\x1funspecified".encode()
    ).hexdigest()[:10]
    assert ids[:6] == [x.id for x in iter_conditions(limit=6)]


def test_filters_and_limit():
    assert count_conditions({"role": "mental_health"}) == 362_880 // 2
    assert count_conditions({"agent": {"persona": "unspecified"}}) == 3 * 2 * 315 * 3
    assert count_conditions({"user": {"age": ["elder", "young"]}, "label": "BB"}) == 362_880 * 2 // 9
    got = list(iter_conditions({"user.ability": "with mobility disability", "agent.race": "Black",
                                "generator": "scripted-c"}, limit=50))
    assert len(got) == 50
    assert all(c.user[3] == "with mobility disability" and c.agent[2] == "Black"
               and c.generator == "scripted-c" for c in got)
    first = list(iter_conditions(limit=12))
    assert Counter(c.cell for c in first) == Counter({c.cell: 3 for c in first})
    with pytest.raises(ValueError, match="valid keys"):
        list(iter_conditions({"colour": "red"}))
    with pytest.raises(ValueError, match="valid values.*elder"):
        list(iter_conditions({"user.age": "ancient"}))


def test_every_dialogue_is_valid_alternating_and_of_study_length():
    lengths = []
    for c in SAMPLE:
        d = compose_dialogue(c)
        assert validate_record(d.to_dict(), d.id) == d
        speakers = [t.speaker for t in d.turns]
        assert speakers == ["user", "agent"] * (len(speakers) // 2)
        assert 10 <= len(d.turns) <= 18
        assert "{" not in _agent_text(d) and "  " not in _agent_text(d)
        lengths.append(len(d.turns))
    assert 14.0 <= sum(lengths) / len(lengths) <= 15.2  # the study averages 14.6


def test_composition_is_deterministic_in_condition_and_seed():
    c = SAMPLE[7]
    assert compose_dialogue(c, seed=5) == compose_dialogue(c, seed=5)
    assert compose_dialogue(c, seed=5).turns != compose_dialogue(c, seed=6).turns
    assert compose_dialogue(c).id == c.id


def test_classes_differ_in_treatment_and_tone_at_full_signal():
    by_class = {k: [] for k in CLASSES}
    for c in SAMPLE:
        d = compose_dialogue(c, signal=1.0)
        by_class[d.label].append(_agent_text(d))
    disparate = {k: sum(bool(DISPARATE.search(t)) for t in v) / len(v) for k, v in by_class.items()}
    uniform = {k: sum(bool(UNIFORM.search(t)) for t in v) / len(v) for k, v in by_class.items()}
    warm = {k: sum(bool(WARM.search(t)) for t in v) / len(v) for k, v in by_class.items()}
    assert disparate["OB"] > 0.95 and disparate["BB"] > 0.95 and disparate["N"] == 0
    assert uniform["N"] > 0.95 and uniform["OB"] == 0 and uniform["BB"] == 0
    assert warm["BB"] > 0.95 and warm["OB"] == 0 and warm["N"] == 0
    bang = {k: sum(t.count("!") for t in v) / len(v) for k, v in by_class.items()}
    assert bang["BB"] > 2 * bang["N"] and bang["BB"] > 2 * bang["OB"]
    questions = {k: sum(t.count("?") for t in v) / len(v) for k, v in by_class.items()}
    assert questions["N"] > questions["OB"]


def test_signal_zero_makes_the_classes_share_all_agent_phrasing():
    for c in SAMPLE[:150]:
        text = _agent_text(compose_dialogue(c, signal=0.0))
        assert not DISPARATE.search(text) and not UNIFORM.search(text) and not WARM.search(text)


def test_no_single_word_separates_a_class_at_default_signal():
    from benevaudit.text import words

    present = {k: Counter() for k in CLASSES}
    for c in SAMPLE:
        d = compose_dialogue(c)
        present[d.label].update({w.lower() for w in words(_agent_text(d))})
    n = len(SAMPLE) // 3
    for k in CLASSES:
        rest = [o for o in CLASSES if o != k]
        for w, hits in present[k].items():
            balanced_acc = (hits / n + 1 - sum(present[o][w] for o in rest) / (2 * n)) / 2
            assert balanced_acc < 0.9, (k, w)


def test_planted_cues_appear_at_their_rate_in_their_class_only():
    cues = (PlantedCue("zephyr", "BB", 0.3), PlantedCue("~", "OB", 0.5))
    turns = {k: [] for k in CLASSES}
    for c in SAMPLE:
        d = compose_dialogue(c, planted_cues=cues)
        agent = [t.text for t in d.turns if t.speaker == "agent"]
        turns[d.label] += agent
        if d.label in ("BB", "OB"):
            token = "zephyr" if d.label == "BB" else "~"
            assert d.meta["planted"][token] == sum(token in t.lower() for t in agent)
    rate = {k: {tok: sum(tok in t.lower() for t in v) / len(v) for tok in ("zephyr", "~")}
            for k, v in turns.items()}
    assert abs(rate["BB"]["zephyr"] - 0.3) < 0.04 and abs(rate["OB"]["~"] - 0.5) < 0.04
    assert rate["N"] == {"zephyr": 0, "~": 0} and rate["OB"]["zephyr"] == rate["BB"]["~"] == 0
    with pytest.raises(ValueError, match="rate"):
        PlantedCue("x", "BB", 1.5)
    with pytest.raises(ValueError, match="label"):
        PlantedCue("x", "XX", 0.5)


def test_embedded_sample_is_triplet_complete_stratified_and_content_addressed(tmp_path):
    path = ensure_scripted_sample(tmp_path, 200, seed=1)
    ds = read_corpus(path)
    assert len(ds) == 201  # rounded to whole triplets
    cells = Counter(d.triplet_key for d in ds)
    assert set(cells.values()) == {3}
    assert all(Counter(d.label for d in ds if d.triplet_key == k) == Counter(CLASSES) for k in cells)
    strata = Counter((d.generator, d.role) for d in ds)
    assert len(strata) == 6 and max(strata.values()) - min(strata.values()) <= 3
    mtime = path.stat().st_mtime_ns
    assert ensure_scripted_sample(tmp_path, 200, seed=1) == path and path.stat().st_mtime_ns == mtime
    assert ensure_scripted_sample(tmp_path, 201, seed=1) == path  # same rounded size
    others = {ensure_scripted_sample(tmp_path, 200, seed=2),
              ensure_scripted_sample(tmp_path, 200, seed=1, signal=0.5),
              ensure_scripted_sample(tmp_path, 200, seed=1,
                                     planted_cues=[{"token": "zephyr", "label": "BB", "rate": 0.2}])}
    assert len(others) == 3 and path not in others
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in {path, *others})  # no temporary files left behind
