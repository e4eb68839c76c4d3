"""The LLM generation path for real: ``generate.py generator=smollm2`` with the embedded model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benevaudit.corpus import read_corpus
from benevaudit.generation.grid import iter_conditions
from benevaudit.outputs.corpus_shards import FailureLog

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smollm2_writes_a_valid_corpus_and_accounts_for_every_id(tmp_path):
    out = tmp_path / "corpus"
    cmd = [sys.executable, str(ROOT / "generate.py"), "generator=smollm2", "limit=3",
           f"out_dir={out}", "max_retries=1",
           f"llm_cache={tmp_path / 'requests.sqlite'}", "progress=false",
           f"hydra.run.dir={tmp_path / 'run'}"]
    # one thread: a 135M model gains nothing from more, and oversubscribed cores stall it
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    card = json.loads((out / "dataset_card.json").read_text())
    assert (out / "_COMPLETE").is_file()
    assert card["provenance"]["backend"] == "hf" and card["provenance"]["model"] == "embedded:smollm2"
    assert card["provenance"]["chat_template_sha256"] not in (None, "none")
    written = card["statistics"]["dialogues"]
    assert written + card["failures"]["gave_up"] == 3  # every id is a dialogue or a listed failure
    failures = FailureLog(out).read()
    assert all(f["reason"] in ("refusal", "empty_turn") and f["raw"] for f in failures)
    if written:
        dialogues = read_corpus(out)
        expected = {c.id for c in iter_conditions(limit=3, generators=("smollm2",))}
        assert {d.id for d in dialogues} <= expected
        assert all(d.meta["source"] == "llm" and len(d.turns) == 10 for d in dialogues)
        assert all([t.speaker for t in d.turns] == ["user", "agent"] * 5 for d in dialogues)
