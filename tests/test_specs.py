"""Typed specs: the words of every bound, the dotted key of every error, and every shipped option
of the fine-tuning audit's groups validating as composed; the run specs of detect, probe,
generate and report validate the shipped configs into typed values, and a bad value anywhere
fails as one line naming its full dotted key."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Literal, Optional

import pytest

from gold_fixtures import gold_overrides
from hydra import compose, initialize_config_dir
from pydantic import Field, model_validator
from recipe_fixtures import PINS, read_by

from benevaudit.detectors.spec import DetectorSpec, EvalSpec
from benevaudit.errors import BenevauditError, ConfigError, InputError
from benevaudit.generation.spec import GeneratorSpec
from benevaudit.llm.spec import DryRun, ModelRun
from benevaudit.pipelines.analyze import AnalyzeRun
from benevaudit.pipelines.config import plain, validated
from benevaudit.pipelines.attribute import AttributeRun
from benevaudit.pipelines.evaluate import EvaluateRun
from benevaudit.pipelines.train import TrainRun
from benevaudit.outputs.spec import FlipsSpec
from benevaudit.specs import (
    Fraction, NonNegative, NonNegativeInt, Positive, PositiveInt, SequenceLength, Share, Spec,
)

CONF = Path(__file__).resolve().parents[1] / "conf"


class Inner(Spec):
    count: PositiveInt
    flag: bool = None          # type: ignore[assignment]

    @model_validator(mode="after")
    def not_seven(self) -> Inner:
        if self.count == 7:
            raise InputError("inner.count=7: seven is reserved")
        return self


class Outer(Spec):
    inner: Inner
    ratios: Annotated[list[Fraction], Field(min_length=2, description="two shares")]
    limit: Optional[PositiveInt] = None
    mode: Literal["a", "b"] = None   # type: ignore[assignment]


@pytest.mark.parametrize("kind, value, words", [
    (PositiveInt, 0, "a positive integer"),
    (NonNegativeInt, -1, "a non-negative integer"),
    (Positive, 0, "a number > 0"),
    (NonNegative, -0.5, "a number >= 0"),
    (Fraction, 1.5, "a number in [0, 1]"),
    (Share, 0, "a number in (0, 1]"),
    (SequenceLength, 600, "an integer in [3, 512]"),
    (Annotated[float, Field(ge=0, lt=1)], 1, "a number in [0, 1)"),
    (Optional[PositiveInt], 0, "a positive integer or null"),
    (bool, "nope", "true or false"),
    (Literal["x", "y"], "z", "one of ['x', 'y']"),
])
def test_each_bound_is_said_in_words(kind, value, words) -> None:
    one = type("One", (Spec,), {"__annotations__": {"v": kind}})
    with pytest.raises(ConfigError) as e:
        one.of({"v": value}, "block")
    assert str(e.value) == f"block.v={value!r}: expected {words}"


def test_strict_types_refuse_what_lax_parsing_would_take() -> None:
    for value in (2.5, 2.0, True, "3"):
        with pytest.raises(ConfigError, match="expected a positive integer"):
            Inner.of({"count": value}, "inner")
    with pytest.raises(ConfigError, match="expected a number > 0"):
        type("R", (Spec,), {"__annotations__": {"lr": Positive}}).of({"lr": float("inf")})


def test_an_error_names_the_whole_dotted_key() -> None:
    good = {"inner": {"count": 1}, "ratios": [0.5, 0.5]}
    cases = [({**good, "inner": {"count": 0}}, "run.inner.count=0: expected a positive integer"),
             ({**good, "inner": {}}, "run.inner.count is required: expected a positive integer"),
             ({**good, "ratios": [0.5, 2]}, "run.ratios=[0.5, 2]: expected two shares"),
             ({**good, "ratios": [0.5]}, "run.ratios=[0.5]: expected two shares"),
             ({**good, "limit": 0}, "run.limit=0: expected a positive integer or null"),
             ({**good, "inner": {"count": 1, "flag": None}},
              "run.inner.flag=None: expected true or false"),
             ({**good, "mode": "c"}, "run.mode='c': expected one of ['a', 'b']")]
    for data, line in cases:
        with pytest.raises(ConfigError) as e:
            Outer.of(data, "run")
        assert str(e.value) == line


def test_a_validators_own_error_passes_unchanged_and_unknown_keys_are_refused() -> None:
    with pytest.raises(InputError, match=r"^inner.count=7: seven is reserved$"):
        Outer.of({"inner": {"count": 7}, "ratios": [0, 1]})
    with pytest.raises(ConfigError) as e:
        Outer.of({"inner": {"count": 2, "extra": "kept"}, "ratios": [0, 1]}, "run")
    assert str(e.value) == "run.inner.extra: unknown key in run.inner; valid keys: count, flag"
    spec = Outer.of({"inner": {"count": 2}, "ratios": [0, 1]})
    assert spec.inner.count == 2 and spec.limit is None


def compose_run(name: str, overrides: list[str], tmp_path: Path) -> dict:
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(name, overrides=[f"paths.root_dir={tmp_path}",
                                       f"paths.output_dir={tmp_path / 'run'}", *overrides])
    return plain(cfg)


def options(group: str) -> list[str]:
    """The group's options train.py composes (an experiment pins one entrypoint)."""
    return sorted(p.stem for p in (CONF / group).glob("*.yaml")
                  if (group != "experiment" or PINS[p.stem] == "train")
                  and read_by("train", group, p.stem))


@pytest.mark.parametrize("group", ["model", "trainer", "data", "callbacks", "attribution",
                                   "intervention", "experiment"])
def test_every_shipped_option_of_the_audit_validates(group: str, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("")
    for name in options(group):
        extra = [f"data.path={corpus}"] if group == "data" and name == "corpus" else []
        if group == "data":
            extra += gold_overrides(name, tmp_path)
        if group == "experiment" and name.endswith("paper"):
            extra = [f"data.path={corpus}"]
        lexicon = tmp_path / "lexicon.json"
        lexicon.write_text('{"N": [{"word": "calm", "score": 1.0}], "OB": [], "BB": []}')
        if group == "intervention":
            extra.append(f"lexicon.path={lexicon}")
        run = TrainRun.of(compose_run("train", [f"{group}={name}", *extra], tmp_path))
        assert run.seed >= 0, name


def test_the_run_specs_of_evaluate_attribute_and_analyze_hold_their_defaults(tmp_path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("")
    run = AnalyzeRun.of(compose_run("analyze", [f"data.path={corpus}"], tmp_path))
    assert (run.mtld.threshold, run.self_bleu.n_seeds, run.vendi.embedder) == (0.72, 5, "minilm")
    with pytest.raises(ConfigError, match=r"^ckpt is required"):
        EvaluateRun.of(compose_run("evaluate", [], tmp_path))
    with pytest.raises(FileNotFoundError, match=r"^ckpt=/no/such/run: no such file or directory"):
        AttributeRun.of(compose_run("attribute", ["ckpt=/no/such/run"], tmp_path))
    with pytest.raises(ConfigError, match=r"^eval_split='dev': expected one of"):
        EvaluateRun.of(compose_run("evaluate", ["ckpt=null", "eval_split=dev"], tmp_path))


# ---- detect, probe, generate, report ------------------------------------------------------
RUNS = {"detect": "DetectRun", "probe": "ProbeRun", "generate": "GenerateRun",
        "report": "ReportRun"}


def spec_of(name: str, tmp: Path, *overrides: str):
    """Entrypoint ``name``'s run spec of its composed config, as its ``run(cfg)`` builds it."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(name, overrides=[f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
                                       *overrides])
    module = importlib.import_module(f"benevaudit.pipelines.{name}")
    return validated(getattr(module, RUNS[name]), cfg)


def error_of(name: str, tmp: Path, *overrides: str) -> str:
    with pytest.raises(BenevauditError) as caught:
        spec_of(name, tmp, *overrides)
    return str(caught.value)


def test_shipped_configs_validate_into_typed_values(tmp_path) -> None:
    detect = spec_of("detect", tmp_path)
    assert (detect.detector.name, detect.detector.kind) == ("judge_operational", "judge")
    assert detect.eval == EvalSpec(fraction=0.1, limit=None, seed=42)   # ${seed} resolved
    assert detect.judges.models[0].llm.model == "embedded:smollm2"
    assert detect.detector.sampling.top_p == 0.9 and detect.detector.demographics is True
    assert not hasattr(detect.detector, "threshold")   # a judge has no threshold key
    assert detect.bootstrap.fractions[0] == 0.005 and not detect.flips.wanted
    assert detect.llm_cache == f"{tmp_path}/outputs/cache/llm/requests"
    guard = spec_of("detect", tmp_path, "detector=granite_guardian_4_1").detector
    assert guard.threshold == 0.5 and guard.llm.backend == "vllm"
    assert guard.llm.model == "ibm-granite/granite-guardian-4.1-8b"   # ${detector.checkpoint}
    probe = spec_of("probe", tmp_path, "probe=fairdialogue_recommendation", "limit=2")
    assert (probe.probe.k, probe.probe.sampling.max_tokens, probe.limit) == (10, "auto", 2)
    assert not hasattr(probe.probe, "switches") and probe.probe.asks_target()
    cobia = spec_of("probe", tmp_path, "probe=cobia_paper").probe
    assert cobia.max_tokens is None and cobia.judges["bias"].llm.backend == "openai"
    generate = spec_of("generate", tmp_path, "generator=smollm2")
    assert generate.generator.exchanges == [5] and generate.generator.llm.batch_size == 12
    assert (generate.batch_size, generate.min_turns, generate.limit) == (256, 6, None)
    report = spec_of("report", tmp_path, f"runs=[{tmp_path}]")
    assert report.runs == [str(tmp_path)] and report.bootstrap.n_resamples == 1000


@pytest.mark.parametrize("name, overrides, expected", [
    ("detect", ["detector.sampling.top_p=0"], "detector.sampling.top_p=0: expected a number in "
                                               "(0, 1]"),
    ("detect", ["detector=granite_guardian_4_1", "detector.llm.max_model_len=0"],
     "detector.llm.max_model_len=0: expected a positive integer or null"),
    ("generate", ["generator=smollm2", "generator.llm.batch_size=-2"],
     "generator.llm.batch_size=-2: expected a positive integer"),
    ("probe", ["probe=fairdialogue_decision", "probe.sampling.temperature=-0.5"],
     "probe.sampling.temperature=-0.5: expected a number >= 0"),
    ("generate", ["generator=smollm2", "generator.exchanges=[4,0]"],
     "generator.exchanges=[4, 0]: expected null or a list of positive integers"),
    ("generate", ["generator=smollm2", "generator.exchanges=[]"], "generator.exchanges=[]"),
])
def test_a_nested_error_names_the_full_dotted_key(name, overrides, expected, tmp_path) -> None:
    assert error_of(name, tmp_path, *overrides).startswith(expected)


@pytest.mark.parametrize("name, override, key", [
    ("probe", "probe.switches.anaphora=yes", "probe.switches.anaphora"),
    ("probe", "progress=1", "progress"),
    ("detect", "detector=llama_guard3 detector.categories=on", "detector.categories"),
    ("report", "wandb.report=0", "wandb.report"),
])
def test_a_flag_typo_is_refused(name, override, key, tmp_path) -> None:
    """``yes``, ``on``, ``1``, ``0`` are no flags: only true or false."""
    line = error_of(name, tmp_path, *override.split(), *(["runs=x"] if name == "report" else []))
    assert line.startswith(f"{key}=") and line.endswith(": expected true or false"), line


@pytest.mark.parametrize("name, overrides, expected", [
    ("detect", ["detector=regard", "detector.threshold=null"],
     "detector.threshold=None: expected a number in [0, 1]"),
    ("detect", ["bootstrap.n_resamples=null"], "bootstrap.n_resamples=None: expected a positive "
                                               "integer"),
    ("generate", ["generator=smollm2", "generator.llm.batch_size=null"],
     "generator.llm.batch_size=None: expected a positive integer"),
    ("probe", ["probe=fairdialogue_recommendation", "probe.k=null"],
     "probe.k=None: expected a positive integer"),
    ("probe", ["seed=null"], "seed=None: expected a non-negative integer"),
])
def test_null_is_refused_where_the_type_is_not_optional(name, overrides, expected,
                                                        tmp_path) -> None:
    assert error_of(name, tmp_path, *overrides) == expected


def test_null_is_taken_where_the_type_says_so(tmp_path) -> None:
    run = spec_of("detect", tmp_path, "eval.limit=null", "llm_cache=null", "ckpt=null")
    assert run.eval.limit is None and run.llm_cache is None
    cobia = spec_of("probe", tmp_path, "probe=cobia", "probe.max_tokens=null").probe
    assert cobia.max_tokens is None


def test_a_key_left_unset_is_required(tmp_path) -> None:
    assert error_of("report", tmp_path) == ("runs is required: expected a run or sweep "
                                            "directory, a glob ('outputs/train/multiruns/*'), "
                                            "or a list [a,b]")


@pytest.mark.parametrize("value, expected", [
    (False, None), (True, DryRun(None)), ({"enabled": False, "tokenizer": "auto"}, None),
    ({"enabled": True, "tokenizer": "auto"}, DryRun("auto")),
    ({"enabled": False, "tokenizer": "embedded"}, DryRun("embedded")),   # the tokenizer alone
    ({"enabled": False, "tokenizer": None}, None),
])
def test_dry_run_is_a_flag_or_a_block(value, expected) -> None:
    run = ModelRun.of({"seed": 0, "progress": False, "llm_cache": None, "dry_run": value})
    assert run.dry() == expected


def test_dry_run_and_the_request_cache_are_checked(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"^dry_run='maybe': expected true, false, or "):
        ModelRun.of({"seed": 0, "progress": True, "llm_cache": None, "dry_run": "maybe"})
    cache = tmp_path / "cache.sqlite"
    cache.write_text("not a database")
    with pytest.raises(BenevauditError, match="llm_cache=.*not a SQLite database"):
        ModelRun.of({"seed": 0, "progress": True, "llm_cache": str(cache), "dry_run": False})


class Detect(Spec):
    detector: DetectorSpec


class Generate(Spec):
    generator: GeneratorSpec


def test_family_specs_stand_alone() -> None:
    """A block validates without an entrypoint, read by its kind; a key its kind lacks fails."""
    detector = Detect.of({"detector": {
        "name": "x", "kind": "sequence_classifier", "threshold": 1, "source": "a/b",
        "trigger": ["toxic"], "label_names": {}, "unit": "utterance", "aggregation": "any",
        "text_format": "{agent}", "max_length": 512, "append_eos": False, "eos_token": None,
        "batch_size": 2, "device": "cpu"}}).detector
    assert detector.threshold == 1.0 and detector.source == "a/b"
    with pytest.raises(ConfigError, match=r"^detector\.kind is required"):
        Detect.of({"detector": {"name": "x"}})
    with pytest.raises(ConfigError, match=r"^generator\.kind='magic': expected one of \['scripted', 'llm'"):
        Generate.of({"generator": {"name": "x", "kind": "magic"}})
    llm = {"name": "x", "kind": "llm", "exchanges": None, "system_in_user": False,
           "sampling": {}, "llm": {"backend": "scripted"}}
    with pytest.raises(ConfigError, match="^generator.mode='chatty': expected one of"):
        Generate.of({"generator": {**llm, "mode": "chatty"}})
    with pytest.raises(ConfigError, match="^generator.mode=None: expected one of"):
        Generate.of({"generator": {**llm, "mode": None}})


def test_flips_need_both_runs() -> None:
    assert FlipsSpec.of({"with": "a", "without": "b"}, "flips").with_ == "a"
    assert not FlipsSpec.of({"with": None, "without": None}, "flips").wanted
    with pytest.raises(ConfigError, match="^flips needs both flips.with="):
        FlipsSpec.of({"with": None, "without": "b"}, "flips")


def test_closed_choices_name_what_the_code_knows() -> None:
    """The Literal of a closed choice lists exactly what the code that reads it knows."""
    from typing import get_args

    from benevaudit.analysis.spec import MarkersSpec, SelfBleuSpec
    from benevaudit.audit.attribution.spec import SplitName, Target
    from benevaudit.generation.spec import PlantedCueSpec
    from benevaudit.metrics.diversity import SMOOTH_METHODS
    from benevaudit.schema import CLASSES, SPLITS

    assert get_args(Target) == ("true", "predicted", *CLASSES)
    assert get_args(SplitName) == SPLITS
    assert get_args(SelfBleuSpec.model_fields["smooth"].annotation) == SMOOTH_METHODS
    for annotation in (MarkersSpec.model_fields["reference"].annotation,
                       PlantedCueSpec.model_fields["label"].annotation):
        assert get_args(annotation) == CLASSES


@pytest.mark.parametrize("name", sorted(p.stem for p in (CONF / "logger").glob("*.yaml")))
def test_every_logger_option_validates(name: str) -> None:
    from benevaudit.outputs.spec import LoggerBlock
    from config_fixtures import option

    assert LoggerBlock.read(option("logger", name)).kind == name
