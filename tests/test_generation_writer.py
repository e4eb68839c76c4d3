"""Resumable shard output: torn journals, manifests, retries, failures and the dataset card."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benevaudit.corpus import CorpusError, read_corpus
from benevaudit.generation.driver import Failure, generate_corpus
from benevaudit.generation.grid import iter_conditions
from benevaudit.generation.scripted import ScriptedProducer, compose_dialogue
from benevaudit.outputs.corpus_shards import (
    COMPLETE, CorpusShards, FailureLog, ResumeError, ShardWriter, recover, write_manifest,
)

CONDITIONS = list(iter_conditions(limit=30))
IDS = [c.id for c in CONDITIONS]


def test_a_torn_journal_line_is_dropped_and_the_journal_sealed_on_resume(tmp_path):
    write_manifest(tmp_path, IDS, {"p": 1})
    with ShardWriter(tmp_path, shard_size=100) as w:  # exits without sealing, like a kill
        w.write([compose_dialogue(c) for c in CONDITIONS[:5]])
    journal = tmp_path / "shard-00000.journal"
    assert journal.is_file()
    with pytest.raises(CorpusError, match="no corpus shards"):
        read_corpus(tmp_path)  # a journal is not a corpus shard; nothing is sealed yet
    with open(journal, "a") as f:
        f.write('{"id": "' + IDS[5] + '", "label": "N", "ro')  # torn mid-line
    assert recover(tmp_path) == set(IDS[:5])
    assert not journal.exists() and (tmp_path / "shard-00000.parquet").is_file()
    assert [d.id for d in read_corpus(tmp_path)] == IDS[:5]


def test_a_journal_sealed_before_the_kill_is_not_counted_twice(tmp_path):
    w = ShardWriter(tmp_path, shard_size=100)
    w.write([compose_dialogue(c) for c in CONDITIONS[:4]])
    journal = tmp_path / "shard-00000.journal"
    saved = journal.read_bytes()
    w.close()
    journal.write_bytes(saved)  # killed between writing the shard and removing the journal
    assert recover(tmp_path) == set(IDS[:4]) and not journal.exists()
    w2 = ShardWriter(tmp_path, shard_size=3)
    w2.write([compose_dialogue(c) for c in CONDITIONS[4:11]])
    w2.close()
    assert sorted(p.name for p in tmp_path.glob("shard-*")) == [
        f"shard-0000{i}.parquet" for i in range(4)]
    assert [d.id for d in read_corpus(tmp_path)] == IDS[:11]


def test_a_different_generation_in_the_same_directory_is_refused(tmp_path):
    write_manifest(tmp_path, IDS, {"seed": 1})
    write_manifest(tmp_path, IDS, {"seed": 1})  # same: resume
    with pytest.raises(ResumeError, match="different generation.*seed"):
        write_manifest(tmp_path, IDS, {"seed": 2})
    with pytest.raises(ResumeError, match="id list"):
        write_manifest(tmp_path, IDS[:-1], {"seed": 1})


class Flaky:
    """Fails some ids for the first attempts and one id always; writes the rest."""

    def __init__(self) -> None:
        self.inner = ScriptedProducer()
        self.calls: list[tuple[int, int]] = []

    def __call__(self, conditions, attempt):
        self.calls.append((len(conditions), attempt))
        out = []
        for c, d in zip(conditions, self.inner(conditions, attempt)):
            if c.id == IDS[0]:
                out.append(Failure("refusal", "I'm sorry, but I can't."))
            elif c.id in IDS[1:4] and attempt < 2:
                out.append(Failure("too_short", "User: hi"))
            elif c.id == IDS[4]:  # a value outside the study vocabularies is kept and listed
                out.append(dataclasses.replace(d, role="legal_advice",
                                               user={**d.user, "age": "teen"}))
            else:
                out.append(d)
        return out


def test_retries_failures_card_and_completion_marker(tmp_path):
    producer = Flaky()
    s = generate_corpus(CONDITIONS, producer, CorpusShards(tmp_path, shard_size=7),
                        {"seed": 42}, {"generator": "x"}, batch_size=8, max_retries=2,
                        progress=False)
    assert (s.expected, s.written_now, s.gave_up) == (30, 29, 1)
    assert (tmp_path / COMPLETE).is_file()
    assert sorted(d.id for d in read_corpus(tmp_path)) == sorted(IDS[1:])
    fails = FailureLog(tmp_path).read()
    assert len(fails) == 3 + 3 * 2  # the always-failing id 3 times, three ids twice
    assert [f["final"] for f in fails if f["id"] == IDS[0]] == [False, False, True]
    assert all(f["raw"] for f in fails)
    card = json.loads((tmp_path / "dataset_card.json").read_text())
    assert card["failures"]["gave_up_ids"] == [IDS[0]]
    assert card["failures"]["by_reason"] == {"refusal": 3, "too_short": 6}
    assert card["statistics"]["dialogues"] == 29 and card["statistics"]["per_class"]["N"] == 9
    written = read_corpus(tmp_path)                # Table 2's messages and class balance
    assert card["statistics"]["messages"] == sum(len(d.turns) for d in written) > 29 * 2
    assert card["statistics"]["class_share"] == {"BB": round(10 / 29, 4), "N": round(9 / 29, 4),
                                                 "OB": round(10 / 29, 4)}
    readme = (tmp_path / "README.md").read_text()
    assert f"- messages: {card['statistics']['messages']}" in readme and '"N": 0.3103' in readme
    assert card["statistics"]["outside_vocabulary"] == {"role": {"legal_advice": 1},
                                                        "user.age": {"teen": 1}}
    assert card["provenance"] == {"generator": "x"}
    assert "29 of 30 expected" in (tmp_path / "README.md").read_text()
    assert producer.calls[:3] == [(8, 0), (4, 1), (4, 2)]  # only failed ids are retried
    again = generate_corpus(CONDITIONS, ScriptedProducer(), CorpusShards(tmp_path),
                            {"seed": 42}, {}, batch_size=8, progress=False)
    assert (again.already_present, again.written_now) == (29, 1)  # the given-up id, retried
    assert len(read_corpus(tmp_path)) == 30


def test_a_producer_returning_the_wrong_count_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="one per condition"):
        generate_corpus(CONDITIONS, lambda cs, a: [], CorpusShards(Path(tmp_path)), {}, {},
                        progress=False)
