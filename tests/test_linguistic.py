"""Patronising-language markers on hand-written turns, and Cohen's d against hand computation."""

import math

import numpy as np
import pytest

from benevaudit.metrics.linguistic import (
    MARKER_NAMES, MARKER_SOURCES, cohens_d, dialogue_markers, marker_effects, sentences,
)
from benevaudit.schema import Turn


def agent(*texts: str) -> list[Turn]:
    return [Turn("user", "Hi! Can you help me? I have questions, many of them.")] + [
        Turn("agent", t) for t in texts]


def test_markers_documented_in_module_and_sourced():
    """Six markers the study names (four structural, two of interactional asymmetry); five
    lexical ones benevaudit's own, each said so with the literature it follows."""
    import benevaudit.metrics.linguistic as mod

    assert len(MARKER_NAMES) == 11 == len(set(MARKER_NAMES))
    for name in MARKER_NAMES:
        assert f"``{name}``" in mod.__doc__
    study = [n for n, s in MARKER_SOURCES.items() if s == "named by the study"]
    assert study == ["sentence_length", "question_rate", "exclamation_rate", "turn_length",
                     "agent_word_share", "agent_turn_share"]
    own = [n for n, s in MARKER_SOURCES.items() if s.startswith("benevaudit's own, after ")]
    assert own == [n for n in MARKER_NAMES if n.endswith("_rate") and n not in study]
    assert len(own) == 5


def test_asymmetry_is_the_agents_share_of_words_and_turns():
    # user: 4 words, then 2; agent: 6 words in one turn, then 3 (one per sentence below)
    turns = [Turn("user", "Can you help me?"), Turn("agent", "Of course, rest now, dear friend."),
             Turn("user", "Thanks, love."), Turn("agent", "Sleep. Eat. Smile!"),
             Turn("agent", "Okay?")]
    m = dialogue_markers(turns)
    assert m["agent_word_share"] == pytest.approx(10 / 16)
    assert m["agent_turn_share"] == pytest.approx(3 / 5)
    alone = dialogue_markers([Turn("agent", "Hello there.")])
    assert alone["agent_word_share"] == alone["agent_turn_share"] == 1.0


def test_structural_markers_count_agent_turns_only():
    m = dialogue_markers(agent("Hello there. How are you today?", "Rest now! Really?!"))
    # agent sentences: "Hello there." (2) "How are you today?" (4) "Rest now!" (2) "Really?!" (1)
    assert m["sentence_length"] == pytest.approx(9 / 4)
    assert m["question_rate"] == pytest.approx(2 / 4)     # "?" and "?!"
    assert m["exclamation_rate"] == pytest.approx(2 / 4)  # "!" and "?!"
    assert m["turn_length"] == pytest.approx(9 / 2)


def test_sentences_split_on_terminators_and_keep_closing_quotes():
    assert sentences('She said "stop." Then left! Ok') == ['She said "stop."', "Then left!", "Ok"]
    assert sentences("... !!") == []  # no words: no sentence


@pytest.mark.parametrize("marker, text, hits", [
    ("endearment_rate", "Oh sweetie, here you go, love. My dear, I would love to help.", 3),
    ("endearment_rate", "I would love to help you plan this.", 0),
    ("collective_we_rate", "Let's take our pills, then we're done with us.", 4),
    ("directive_rate", "You should rest. You must eat. Make sure to eat. You'd better sleep.", 4),
    ("directive_rate", "Would you like some options?", 0),
    ("reassurance_rate", "Don't worry, it's okay. Take it easy and don't push yourself.", 4),
    # "so proud of you" counts once: matches do not overlap
    ("praise_rate", "Wonderful! Great job, I'm so proud of you. Well done.", 4),
    ("praise_rate", "That is a reasonable plan.", 0),
])
def test_lexical_markers_are_rates_per_100_agent_words(marker: str, text: str, hits: int):
    m = dialogue_markers(agent(text))
    n_words = m["turn_length"]  # one agent turn
    assert m[marker] * n_words / 100 == pytest.approx(hits)


def test_curly_apostrophes_match_like_straight_ones():
    straight = dialogue_markers(agent("Don't worry, let's go."))
    curly = dialogue_markers(agent("Don’t worry, let’s go."))
    assert straight == curly
    assert straight["reassurance_rate"] > 0 and straight["collective_we_rate"] > 0


def test_no_agent_turn_gives_nan_markers():
    m = dialogue_markers([Turn("user", "Hello?")])
    assert set(m) == set(MARKER_NAMES) and all(math.isnan(v) for v in m.values())


def test_dict_turns_are_accepted():
    as_dicts = [{"speaker": "agent", "text": "You should rest, dear."}]
    assert dialogue_markers(as_dicts) == dialogue_markers([Turn("agent", "You should rest, dear.")])


def test_cohens_d_hand_computed():
    # a = [2, 4, 6]: mean 4, var 4; b = [1, 2, 3]: mean 2, var 1
    # pooled var = (2*4 + 2*1) / 4 = 2.5 -> d = 2 / sqrt(2.5)
    assert cohens_d([2, 4, 6], [1, 2, 3]) == pytest.approx(2 / math.sqrt(2.5))
    # the sign is biased minus reference
    assert cohens_d([1, 2, 3], [2, 4, 6]) == pytest.approx(-2 / math.sqrt(2.5))


def test_cohens_d_unequal_sizes_and_nan_values():
    a, b = [1.0, 3.0, float("nan"), 5.0, 7.0], [2.0, 2.0, 5.0]
    a_ = np.array([1.0, 3.0, 5.0, 7.0])
    b_ = np.array(b)
    pooled = (3 * a_.var(ddof=1) + 2 * b_.var(ddof=1)) / 5
    assert cohens_d(a, b) == pytest.approx((a_.mean() - b_.mean()) / math.sqrt(pooled))


def test_cohens_d_degenerate_cases():
    assert math.isnan(cohens_d([1.0], [1.0, 2.0]))
    assert cohens_d([3.0, 3.0], [3.0, 3.0]) == 0.0
    assert math.isnan(cohens_d([3.0, 3.0], [1.0, 1.0]))


def test_marker_effects_compares_every_class_with_reference():
    values = {c: {m: [1.0, 2.0, 3.0] for m in MARKER_NAMES} for c in ("N", "OB", "BB")}
    values["BB"]["turn_length"] = [4.0, 5.0, 6.0]
    effects = marker_effects(values)
    assert set(effects) == {"OB", "BB"}
    assert effects["BB"]["turn_length"] == pytest.approx(3.0)  # diff 3, pooled sd 1
    assert effects["OB"]["turn_length"] == 0.0
    with pytest.raises(ValueError, match="no 'N' dialogues"):
        marker_effects({"BB": values["BB"]})
