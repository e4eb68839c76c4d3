"""The attribution cache keeps no bad entry: a result with a non-finite or mismatched value is
not stored, a shard that does not read back whole is removed with a warning (its dialogues are
computed again), and a cache folder that cannot be used is one error line saying that deleting
it loses nothing but time. Hand-made results: no model is needed."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.store import AttributionStore
from benevaudit.errors import InputError
from benevaudit.text import Span

KEY = {"format": 1, "model": "m", "method": "rollout"}


def result(i: int, relevance: list[float] | None = None) -> DialogueAttribution:
    words = ["dear", "let", "me"]
    return DialogueAttribution(
        id=f"d{i}", label=1, target=1, probs=np.array([0.2, 0.5, 0.3], dtype=np.float32),
        input_ids=[101, 7, 8, 9, 102], words=words,
        spans=[Span(w, 3 * j, 3 * j + 2, 1, "agent") for j, w in enumerate(words)],
        relevance=np.array(relevance or [0.5, 0.3, 0.2]), pieces=[[1], [2], [3]])


def test_a_result_that_does_not_check_out_is_not_stored(tmp_path, caplog) -> None:
    store = AttributionStore(tmp_path / "a", KEY)
    with caplog.at_level(logging.WARNING, logger="benevaudit.audit"):
        store.append([result(0), result(1, [0.5, float("nan"), 0.1]), result(2, [1.0, 0.0])])
    assert sorted(store.load()) == ["d0"]
    assert "2 attribution results with non-finite or mismatched values are not stored" in \
        caplog.text


def test_a_shard_that_does_not_read_back_is_removed_and_the_rest_is_kept(tmp_path,
                                                                        caplog) -> None:
    store = AttributionStore(tmp_path / "a", KEY)
    store.append([result(0)])
    store.append([result(1)])
    first, second = sorted((tmp_path / "a").glob("part-*.parquet"))
    first.write_bytes(first.read_bytes()[:40])                      # cut by a full disk
    with caplog.at_level(logging.WARNING, logger="benevaudit.audit"):
        done = store.load()
    assert sorted(done) == ["d1"] and np.allclose(done["d1"][1].relevance, [0.5, 0.3, 0.2])
    assert not first.exists() and second.exists()
    assert f"{first}: an attribution shard that does not read back" in caplog.text
    store.append([result(0)])                    # computed again, in a shard of its own
    assert sorted(store.load()) == ["d0", "d1"] and second.exists()


def test_a_cache_folder_that_cannot_be_used_is_one_line(tmp_path) -> None:
    (tmp_path / "a").write_text("not a folder")
    with pytest.raises(InputError) as err:
        AttributionStore(tmp_path / "a" / "m-123", KEY)
    message = str(err.value)
    assert str(tmp_path / "a" / "m-123") in message and "loses nothing but time" in message
    assert "\n" not in message
