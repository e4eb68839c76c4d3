"""Every option of every config group, composed under each entrypoint that reads the group,
validates against that entrypoint's run spec: no shipped YAML carries a key its spec lacks, and
a key added on the command line with ``+`` that no spec names fails as one line."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from gold_fixtures import gold_overrides
import yaml
from hydra import compose, initialize_config_dir
from recipe_fixtures import PINS, read_by

from benevaudit.errors import BenevauditError
from benevaudit.pipelines.config import validated

CONF = Path(__file__).resolve().parents[1] / "conf"
RUNS = {"train": "TrainRun", "evaluate": "EvaluateRun", "attribute": "AttributeRun",
        "detect": "DetectRun", "probe": "ProbeRun", "generate": "GenerateRun",
        "analyze": "AnalyzeRun", "report": "ReportRun"}
SKIP = {"hydra", "paths", "local", "logger"}     # resolved where they are read, not specs


def groups(primary: str) -> list[str]:
    defaults = yaml.safe_load((CONF / f"{primary}.yaml").read_text())["defaults"]
    names = [next(iter(d)).replace("optional ", "") for d in defaults if isinstance(d, dict)]
    return [g for g in names if g not in SKIP and (CONF / g).is_dir()]


def options(primary: str, group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml")
                  if (group != "experiment" or PINS.get(p.stem) == primary)
                  and read_by(primary, group, p.stem))


CASES = [(p, g, o) for p in RUNS for g in groups(p) for o in options(p, g)]


def needs(primary: str, tmp: Path) -> list[str]:
    """What a run cannot do without: a corpus file for data=corpus, a ckpt, the runs."""
    corpus = tmp / "c.jsonl"
    corpus.write_text("")
    lexicon = tmp / "lexicon.json"
    lexicon.write_text('{"N": [{"word": "calm", "score": 1.0}], "OB": [], "BB": []}')
    extra = {"evaluate": ["ckpt=null"], "attribute": ["ckpt=null"], "report": ["runs=x"]}
    return [f"+corpus_file={corpus}", f"+lexicon_file={lexicon}", *extra.get(primary, [])]


def run_spec(primary: str, tmp: Path, *overrides: str):
    """The entrypoint's validated spec, resolved as in a run: with Hydra's runtime config set
    (a pin may read ``${hydra:runtime.choices.<group>}``), and unset again after."""
    from hydra.core.hydra_config import HydraConfig

    given = [f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}", *overrides]
    with initialize_config_dir(str(CONF), version_base="1.3"):
        runtime = compose(primary, overrides=given, return_hydra_config=True)
        cfg = compose(primary, overrides=given)
    module = importlib.import_module(f"benevaudit.pipelines.{primary}")
    hydra, before = HydraConfig.instance(), HydraConfig.instance().cfg
    hydra.set_config(runtime)
    try:
        return validated(getattr(module, RUNS[primary]), cfg)
    finally:
        hydra.cfg = before


@pytest.mark.parametrize("primary,group,option", CASES,
                         ids=[f"{p}:{g}={o}" for p, g, o in CASES])
def test_every_option_of_every_group_validates(primary, group, option, tmp_path) -> None:
    extra = needs(primary, tmp_path)
    corpus, lexicon = (e.split("=", 1)[1] for e in extra[:2])
    extra = extra[2:]
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(primary, overrides=[f"{group}={option}"])
    if cfg.get("data") is not None and cfg.data.kind == "corpus":
        extra.append(f"data.path={corpus}")
    if cfg.get("data") is not None and cfg.data.kind == "probe_run":
        (tmp_path / "probe_run").mkdir()
        (tmp_path / "probe_run" / "responses.parquet").write_text("")   # checked present only
        extra.append(f"data.path={tmp_path / 'probe_run'}")
    if cfg.get("data") is not None and cfg.data.kind == "inspect_log":
        (tmp_path / "logs").mkdir()                           # a folder of logs: checked present
        extra.append(f"data.path={tmp_path / 'logs'}")
    if cfg.get("data") is not None:
        extra += gold_overrides(cfg.data.kind, tmp_path)
    for name, block in (cfg.get("external") or {}).items():
        extra += gold_overrides(block.data.kind, tmp_path, f"external.{name}.data")
    if group == "intervention":
        extra.append(f"lexicon.path={lexicon}")
    run = run_spec(primary, tmp_path, f"{group}={option}", *extra)
    assert run is not None


@pytest.mark.parametrize("primary, override, block, kind_words, valid", [
    ("probe", "+probe.max_tokns=64", "probe", "family=cobia", "max_tokens"),
    ("probe", "+probe.max_tokns=64 probe=fairdialogue_recommendation", "probe",
     "family=fairdialogue, kind=recommendation", "k"),
    ("detect", "+detector.thresold=0.3 detector=regard", "detector", "kind=sequence_classifier",
     "threshold"),
    ("detect", "+detector.demographic=false", "detector", "kind=judge", "demographics"),
    ("train", "+optim.learning_rate=0.1", "optim", "", "lr"),
])
def test_an_unknown_key_names_itself_its_block_and_the_valid_keys(
        primary, override, block, kind_words, valid, tmp_path) -> None:
    with pytest.raises(BenevauditError) as caught:
        run_spec(primary, tmp_path, *override.split())
    line = str(caught.value)
    key = override.split()[0][1:].split("=")[0]
    assert "\n" not in line and line.startswith(f"{key}: unknown key in {block}"), line
    assert kind_words in line and f" {valid}," in line or line.endswith(f" {valid}"), line


ROOT = CONF.parent


@pytest.mark.parametrize("script, override, kind_words", [
    ("probe.py", "+probe.max_tokns=64", "(family=cobia)"),
    ("detect.py", "+detector.thresold=0.3", "(kind=judge)"),
    ("train.py", "+optim.learning_rate=0.1", "in optim;"),
])
def test_the_entrypoint_refuses_an_unknown_key_in_one_line(script, override, kind_words,
                                                           tmp_path) -> None:
    """``python probe.py +probe.max_tokns=64`` exits 2 before any model work, saying why."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / script), override,
                           f"paths.root_dir={tmp_path}", "logger=none"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2, done.stderr[-2000:]
    key = override[1:].split("=")[0]
    assert len(errors) == 1 and errors[0].startswith(f"error: {key}: unknown key"), errors
    assert kind_words in errors[0] and "valid keys:" in errors[0], errors
