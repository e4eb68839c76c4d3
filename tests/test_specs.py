"""Typed specs: the words of every bound, the dotted key of every error, and every shipped option
of the fine-tuning audit's groups validating as composed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional

import pytest
from hydra import compose, initialize_config_dir
from pydantic import Field, model_validator

from benevaudit.errors import ConfigError, InputError
from benevaudit.pipelines.analyze import AnalyzeRun
from benevaudit.pipelines.config import plain
from benevaudit.pipelines.evaluate import AttributeRun, EvaluateRun
from benevaudit.pipelines.train import TrainRun
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


def test_a_validators_own_error_passes_unchanged_and_unknown_keys_pass_through() -> None:
    with pytest.raises(InputError, match=r"^inner.count=7: seven is reserved$"):
        Outer.of({"inner": {"count": 7}, "ratios": [0, 1]})
    spec = Outer.of({"inner": {"count": 2, "extra": "kept"}, "ratios": [0, 1], "note": 3})
    assert spec.inner.count == 2 and spec.limit is None
    assert spec.as_dict() == {"inner": {"count": 2, "extra": "kept"}, "ratios": [0.0, 1.0],
                              "note": 3}   # keys the config lacked stay absent


def compose_run(name: str, overrides: list[str], tmp_path: Path) -> dict:
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(name, overrides=[f"paths.root_dir={tmp_path}",
                                       f"paths.output_dir={tmp_path / 'run'}", *overrides])
    return plain(cfg)


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.mark.parametrize("group", ["model", "trainer", "data", "callbacks", "attribution",
                                   "intervention", "experiment"])
def test_every_shipped_option_of_the_audit_validates(group: str, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("")
    for name in options(group):
        extra = [f"data.path={corpus}"] if group == "data" and name == "corpus" else []
        if group == "experiment" and name == "paper":
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
