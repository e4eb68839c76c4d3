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
from benevaudit.detectors.judges import JudgeDetector
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
    block = {k: v for k, v in spec["llm"].items() if v is not None}
    if not block.get("chat_template") and is_guard_checkpoint(block.get("model"),
                                                              spec["checkpoint"]):
        template = guard_format(spec["kind"]).template
        if template is not None:
            block["chat_template"] = template
    return block


def judge_llm_blocks(spec: dict[str, Any], judges: list[dict[str, Any]]) -> list[tuple[str, dict]]:
    """(name, llm block) per judge; with one judge, non-null ``detector.llm`` keys override it."""
    overrides = {k: v for k, v in spec["llm"].items() if v is not None}
    only = spec["judge"]
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
    return spec["kind"] != "external"


def decision_rule(spec: dict[str, Any]) -> tuple[str, str]:
    """(``unit``, ``aggregation``) of a detector that decides from its units, checked."""
    unit, aggregation = spec["unit"], spec["aggregation"]
    if aggregation not in AGGREGATIONS:
        raise ConfigError(f"detector.aggregation={aggregation!r}; valid: {list(AGGREGATIONS)}")
    if unit not in UNITS:
        raise ConfigError(f"detector.unit={unit!r}; valid: {list(UNITS)}")
    return unit, aggregation


def external_detector(name: str, predictions: dict[str, Any] | None) -> ExternalDetector:
    """``detector=external``: the ``predictions`` block says where its decisions are, and how
    they are read."""
    if predictions is None:
        raise ConfigError("detector=external needs the predictions block "
                          "(predictions.path=<file.parquet | file.csv>)")
    return ExternalDetector(name, predictions["path"], predictions["aggregation"],
                            float(predictions["threshold"]))


def build_detector(spec: dict[str, Any], judges: list[dict[str, Any]] | None = None,
                   cache: str | None = None, checkpoint: Checkpoint | None = None,
                   predictions: dict[str, Any] | None = None, seed: int = 0) -> Detector:
    """A detector from a config block as ``conf/detector/`` composes it (every key its kind
    reads). ``judges`` are the judges group's models, ``checkpoint`` the trained classifier
    (``detector=finetuned``), ``predictions`` the ``predictions`` block (``detector=external``)."""
    kind = spec["kind"]
    if kind == "external":
        return external_detector(spec["name"], predictions)
    if kind not in KINDS:
        raise ConfigError(f"detector.kind={kind!r} is not a detector; valid kinds: {list(KINDS)}")
    unit, aggregation = decision_rule(spec)
    if kind == "finetuned":
        return finetuned_class()(spec["name"], checkpoint, spec["max_length"],
                                 spec["head_tokens"], int(spec["batch_size"]), seed)
    if kind == "judge":
        return build_judge(spec, unit, judges or [], cache)
    common = dict(unit=unit, aggregation=aggregation, threshold=float(spec["threshold"]))
    if kind == "sequence_classifier":
        return SequenceClassifierDetector(
            spec["name"], spec["source"], list(spec["trigger"]), **common,
            label_names=spec["label_names"], text_format=spec["text_format"],
            max_length=int(spec["max_length"]), append_eos=bool(spec["append_eos"]),
            eos_token=spec["eos_token"],
            batch_size=int(spec["batch_size"]), device=spec["device"])
    model = build_from_block(guard_llm_block(spec), cache=cache)     # a guard
    return GuardDetector(spec["name"], kind, model, **common, mode=spec["mode"],
                         criteria=spec["criteria"], max_tokens=spec["max_tokens"],
                         categories=bool(spec["categories"]), score_prefill=spec["score_prefill"],
                         parser=spec["parser"])


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
    sampling = Sampling(**spec["sampling"])
    return JudgeDetector(spec["name"], factories, spec["strategy"],
                         demographics=bool(spec["demographics"]), mode=spec["mode"],
                         sampling=sampling, ties=spec["ties"])


__all__ = ["AGGREGATIONS", "Checkpoint", "Detector", "DialogueResult", "GUARD_KINDS", "KINDS",
           "UNITS", "Unit", "UnitVerdict", "aggregate", "build_detector", "decision_rule",
           "evaluation_set", "external_detector", "guard_llm_block", "judge_llm_blocks",
           "make_units", "predictions_frame", "read_external", "reads_corpus"]
