"""Detectors built from their specs as a run composes them: a ``conf/detector/`` option with a
few keys changed, validated, so a test exercises the values a run reads."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benevaudit.detectors.guards import GuardDetector
from benevaudit.detectors.judges import JudgeDetector, JudgeFactory
from benevaudit.detectors.spec import (
    ClassifierSpec, DetectorSpec, GuardSpec, JudgeModel, JudgeSpec,
)
from benevaudit.llm import ChatModel
from benevaudit.specs import Spec

CONF = Path(__file__).resolve().parents[1] / "conf"


@cache
def resolved(name: str) -> dict[str, Any]:
    """``detector=name`` composed under detect.py's config, its interpolations resolved."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("detect", overrides=[f"detector={name}", "seed=0"])
    block = OmegaConf.to_container(cfg.detector, resolve=True)
    assert isinstance(block, dict)
    return block


@cache
def option_of_kind(kind: str) -> str:
    """The ``conf/detector/`` option whose ``kind`` is ``kind``."""
    names = sorted(p.stem for p in (CONF / "detector").glob("*.yaml"))
    return next(n for n in names if OmegaConf.load(CONF / "detector" / f"{n}.yaml").get("kind")
                == kind)


def merged(block: dict[str, Any], keys: dict[str, Any]) -> dict[str, Any]:
    out = dict(block)
    for key, value in keys.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and key == "llm" else value
    return out


def spec_of(cls: type[Spec], name: str, **keys: Any) -> Any:
    return cls.of(merged(resolved(name), keys), "detector")


def classifier_spec(name: str, **keys: Any) -> ClassifierSpec:
    return spec_of(ClassifierSpec, name, **keys)


def guard_spec(kind: str, **keys: Any) -> GuardSpec:
    """The option of guard ``kind``, with ``keys`` changed (``llm`` merged key by key)."""
    return spec_of(GuardSpec, option_of_kind(kind), **keys)


def guard(kind: str, model: ChatModel, **keys: Any) -> GuardDetector:
    return GuardDetector(guard_spec(kind, **keys), model)


def judge_spec(name: str = "judge_plain", **keys: Any) -> JudgeSpec:
    return spec_of(JudgeSpec, name, **keys)


def judge(judges: Sequence[tuple[str, JudgeFactory]], name: str = "judge_plain",
          **keys: Any) -> JudgeDetector:
    return JudgeDetector(judge_spec(name, **keys), judges)


def judge_models(*blocks: dict[str, Any]) -> list[JudgeModel]:
    """A judges group: ``{"name": ..., "llm": {...}}`` each."""
    return [JudgeModel.of(b, f"judges.models[{i}]") for i, b in enumerate(blocks)]


def detector_spec(block: dict[str, Any]) -> DetectorSpec:
    """Any kind's spec from a whole block (the union picks the kind)."""
    from pydantic import TypeAdapter

    return TypeAdapter(DetectorSpec).validate_python(block)
