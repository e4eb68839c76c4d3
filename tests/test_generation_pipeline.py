"""``generate.py``: config composition, filters, limit, resume and error messages, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from benevaudit.corpus import read_corpus
from benevaudit.errors import ConfigError
from benevaudit.generation.grid import iter_conditions
from benevaudit.pipelines.generate import run

ROOT = Path(__file__).resolve().parents[1]
GENERATORS = sorted(p.stem for p in (ROOT / "conf" / "generator").glob("*.yaml"))


def config(tmp: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("generate", overrides=[
            f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}", f"out_dir={tmp / 'corpus'}",
            "progress=false", *overrides])


def test_every_generator_config_composes_and_names_its_backend(tmp_path):
    assert GENERATORS == ["gemma3_12b", "llama31_8b", "mistral7b", "scripted", "smollm2"]
    for name in GENERATORS:
        gen = config(tmp_path, f"generator={name}").generator
        assert gen.name == name and gen.kind in ("scripted", "llm")
        if gen.kind == "llm":
            assert gen.llm.backend in ("hf", "vllm") and gen.llm.model
            assert 0 < gen.sampling.top_p <= 1 and gen.sampling.max_tokens > 0


def test_scripted_run_with_filters_and_limit_writes_exactly_those_ids(tmp_path):
    cfg = config(tmp_path, "limit=24", "filters.role=health_lifestyle",
                 "filters.user.age=[elder]", "filters.agent.persona=unspecified")
    metrics = run(cfg)
    want = [c.id for c in iter_conditions({"role": "health_lifestyle", "user.age": "elder",
                                           "agent.persona": "unspecified"}, limit=24)]
    got = read_corpus(tmp_path / "corpus")
    assert [d.id for d in got] == want
    assert all(d.role == "health_lifestyle" and d.user["age"] == "elder" and d.agent is None
               for d in got)
    assert metrics["generate/dialogues"] == 24 and metrics["generate/gave_up"] == 0
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["generate/expected"] == 24
    again = run(cfg)  # resume of a complete corpus writes nothing
    assert again["generate/written_now"] == 0 and again["generate/already_present"] == 24


def test_bad_options_fail_with_the_valid_choices(tmp_path):
    with pytest.raises(ConfigError, match="valid values.*mental_health"):
        run(config(tmp_path, "filters.role=legal"))
    with pytest.raises(ConfigError, match="positive"):
        run(config(tmp_path, "limit=0"))
    run(config(tmp_path, "limit=3"))
    with pytest.raises(Exception, match="different generation"):
        run(config(tmp_path, "limit=3", "seed=7"))
