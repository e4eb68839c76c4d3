"""Detectors: one interface over sequence classifiers, generative guards and LLM judges.

``build_detector(spec, ...)`` turns a plain ``detector`` config block into a
``Detector``. ``kind`` picks the family:

| kind | family | module |
| --- | --- | --- |
| ``sequence_classifier`` | Regard, ToxiGen, BeaverTails | ``classifiers`` |
| ``llama_guard3`` ``granite_guardian`` (3.3) ``granite_guardian41`` ``wildguard`` ``qwen3guard`` | generative guards, one module each | ``guards/`` |
| ``judge`` | prompted LLM judges and their ensemble | ``judges`` |
| ``finetuned`` | the audit's own trained classifier (``ckpt=``) | ``finetuned`` |
| ``external`` | predictions made elsewhere (``predictions.path=``) | ``external`` |

``evaluation_set`` picks the dialogues a detector is scored on; ``Detector.predictions`` gives
the rows of a run's ``predictions.parquet``. Heavy imports happen inside the detectors.
"""

from __future__ import annotations

import importlib
from typing import Any

from benevaudit.detectors.base import (
    Checkpoint,
    Detector,
    DialogueResult,
    UnitVerdict,
    predictions_frame,
)
from benevaudit.detectors.classifiers import SequenceClassifierDetector
from benevaudit.detectors.evaluation import evaluation_set
from benevaudit.detectors.external import ExternalDetector, read_external
from benevaudit.detectors.guards.detector import GuardDetector
from benevaudit.detectors.guards.registry import GUARD_KINDS, guard_format
from benevaudit.detectors.judges import STUDY_SAMPLING, JudgeDetector
from benevaudit.detectors.units import AGGREGATIONS, UNITS, Unit, aggregate, make_units
from benevaudit.errors import ConfigError
from benevaudit.llm import Sampling, build_from_block

MODEL_KINDS: tuple[str, ...] = ("sequence_classifier", *GUARD_KINDS, "judge")
KINDS: tuple[str, ...] = (*MODEL_KINDS, "finetuned", "external")
# Imported only when asked for: it runs the audit's classifier (torch, Lightning, transformers).
FINETUNED = "benevaudit.detectors.finetuned:FinetunedDetector"


def finetuned_class() -> type[Detector]:
    """The ``finetuned`` detector's class, imported now (see ``FINETUNED``)."""
    module_name, class_name = FINETUNED.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def __getattr__(name: str) -> Any:
    if name == "FinetunedDetector":
        return finetuned_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_guard_checkpoint(model: Any, checkpoint: Any) -> bool:
    """The guard's own weights: its hub id, or a local copy in a directory of the same name
    (``/models/Llama-Guard-3-8B`` for ``meta-llama/Llama-Guard-3-8B``)."""
    if not model or not checkpoint:
        return False
    def name(path: Any) -> str:
        return str(path).rstrip("/").split("/")[-1].lower()

    return name(model) == name(checkpoint)


def guard_llm_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The guard's llm block. On the guard's own weights a shipped chat template that builds the
    guard instruction itself (which would wrap the already-built prompt a second time) is
    replaced by a role-only one; Granite Guardian 4.1 keeps its own, which only frames roles.
    Any other model keeps its own template, as the embedded stand-in does."""
    block = {k: v for k, v in (spec.get("llm") or {}).items() if v is not None}
    if not block.get("chat_template") and is_guard_checkpoint(block.get("model"),
                                                              spec.get("checkpoint")):
        template = guard_format(spec["kind"]).template
        if template is not None:
            block["chat_template"] = template
    return block


def judge_llm_blocks(spec: dict[str, Any], judges: list[dict[str, Any]]) -> list[tuple[str, dict]]:
    """(name, llm block) per judge; with one judge, non-null ``detector.llm`` keys override it."""
    overrides = {k: v for k, v in (spec.get("llm") or {}).items() if v is not None}
    only = spec.get("judge")
    if only is not None:
        names = [j["name"] for j in judges]
        if only not in names:
            raise ConfigError(f"detector.judge={only!r} is not in the judges group; "
                              f"valid: {names}")
        judges = [j for j in judges if j["name"] == only]
    if overrides and len(judges) > 1:
        raise ConfigError(f"detector.llm.* overrides one judge, but the judges group lists "
                          f"{len(judges)}; pick one with detector.judge=<name> "
                          f"({[j['name'] for j in judges]})")
    return [(j["name"], {**dict(j["llm"]), **overrides}) for j in judges]


def reads_corpus(spec: dict[str, Any]) -> bool:
    """Whether the detector decides the corpus's dialogues (``external`` reads a file instead)."""
    return spec.get("kind") != "external"


def build_detector(spec: dict[str, Any], judges: list[dict[str, Any]] | None = None,
                   cache: str | None = None, checkpoint: Checkpoint | None = None,
                   predictions: dict[str, Any] | None = None, seed: int = 0) -> Detector:
    """A detector from a plain config block (see ``conf/detector/*.yaml``). ``judges`` are the
    judges group's models, ``checkpoint`` the trained classifier (``detector=finetuned``),
    ``predictions`` the ``predictions`` block (``detector=external``)."""
    kind = spec.get("kind")
    common = dict(unit=spec.get("unit", "utterance"), aggregation=spec.get("aggregation", "any"),
                  threshold=float(spec.get("threshold", 0.5)))
    if common["aggregation"] not in AGGREGATIONS:
        raise ConfigError(f"detector.aggregation={common['aggregation']!r}; valid: "
                          f"{list(AGGREGATIONS)}")
    if common["unit"] not in UNITS:
        raise ConfigError(f"detector.unit={common['unit']!r}; valid: {list(UNITS)}")
    if kind == "sequence_classifier":
        return SequenceClassifierDetector(
            spec["name"], spec["source"], list(spec["trigger"]), **common,
            label_names=spec.get("label_names"), text_format=spec.get("text_format", "{agent}"),
            max_length=int(spec.get("max_length", 512)),
            append_eos=bool(spec.get("append_eos", False)),
            batch_size=int(spec.get("batch_size", 16)), device=spec.get("device", "auto"))
    if kind in GUARD_KINDS:
        model = build_from_block(guard_llm_block(spec), cache=cache)
        return GuardDetector(spec["name"], kind, model, **common, mode=spec.get("mode"),
                             criteria=spec.get("criteria", "social_bias"),
                             max_tokens=spec.get("max_tokens"),
                             categories=bool(spec.get("categories", True)),
                             score_prefill=spec.get("score_prefill"))
    if kind == "judge":
        return build_judge(spec, common["unit"], judges or [], cache)
    if kind == "finetuned":
        return finetuned_class()(spec["name"], checkpoint, spec.get("max_length"),
                                 spec.get("head_tokens"), int(spec.get("batch_size", 32)), seed)
    if kind == "external":
        block = predictions or {}
        return ExternalDetector(spec["name"], block.get("path"), block.get("aggregation"),
                                float(block.get("threshold", 0.5)))
    raise ConfigError(f"detector.kind={kind!r} is not a detector; valid kinds: {list(KINDS)}")


def build_judge(spec: dict[str, Any], unit: str, judges: list[dict[str, Any]],
                cache: str | None) -> JudgeDetector:
    """The judge detector: one model factory per judge of the group, each built when its turn
    comes."""
    if unit != "dialogue":
        raise ConfigError(f"detector.unit={unit!r}: a judge reads the whole "
                          "dialogue; expected detector.unit=dialogue")
    blocks = judge_llm_blocks(spec, judges)
    factories = [(name, (lambda b=block: build_from_block(b, cache=cache)))
                 for name, block in blocks]
    sampling = Sampling(**{**STUDY_SAMPLING.__dict__, **(spec.get("sampling") or {})})
    return JudgeDetector(spec["name"], factories, spec["strategy"],
                         demographics=bool(spec.get("demographics", True)),
                         mode=spec.get("mode", "score"), sampling=sampling,
                         ties=spec.get("ties", "order"))


__all__ = ["AGGREGATIONS", "Checkpoint", "Detector", "DialogueResult", "GUARD_KINDS", "KINDS",
           "UNITS", "Unit", "UnitVerdict", "aggregate", "build_detector", "evaluation_set",
           "guard_llm_block", "judge_llm_blocks", "make_units", "predictions_frame",
           "read_external", "reads_corpus"]
