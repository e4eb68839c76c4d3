"""Which models and data of a run stand in for the study's, read from its record.

A run on 2 CPU cores swaps the study's models for what runs there: the packaged SmolLM2 in
place of an 8B guard or judge, the packaged MiniLM encoder or a tiny random-weight BERT in place
of bert-base-uncased, the scripted corpus in place of a generated one. Its figures test the code
path, not the world, and every table row and figure of such a run is marked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pathlib import Path

from benevaudit.report.record import RunRecord, record_or_hydra

EMBEDDED_LLM = "the embedded SmolLM2-135M"
STUDY_MODEL = "bert-base-uncased"
MARK = "[stand-in]"
NOTE = (f"Rows and figures marked {MARK} ran a stand-in for the study's model or data "
        "(named in the What ran table): they test the code path, not the study's claim.")


def _at(recorded: dict[str, Any], key: str) -> Any:
    """The recorded config's value at the dotted ``key``; None where it has none."""
    node: Any = recorded
    for part in key.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _llm(block: Any, instead: str) -> str | None:
    """An llm block that runs the embedded or scripted model in place of ``instead``."""
    if not isinstance(block, dict):
        return None
    model, backend = str(block.get("model") or ""), block.get("backend")
    if backend == "scripted":
        return f"a scripted LLM in place of {instead}"
    if model.startswith("embedded:"):
        return f"{EMBEDDED_LLM} in place of {instead}"
    return None


def _encoder(source: Any) -> str | None:
    if source == "tiny":
        return f"a tiny random-weight BERT in place of {STUDY_MODEL}"
    if isinstance(source, str) and source.startswith("packaged:"):
        return f"the packaged {source.split(':', 1)[1]} encoder in place of {STUDY_MODEL}"
    return None


def _detector(recorded: dict[str, Any]) -> Iterator[str | None]:
    detector = _at(recorded, "detector")
    if not isinstance(detector, dict):
        return
    kind = str(detector.get("kind") or "")
    wanted = detector.get("checkpoint") or ("an 8B judge" if kind == "judge" else None)
    if wanted:
        yield _llm(detector.get("llm"), str(wanted))
    if kind == "finetuned" and _at(recorded, "ckpt"):
        trained = _trained(Path(str(_at(recorded, "ckpt"))))
        if trained is not None:
            yield _encoder(_at(trained.config, "model.source"))


def _trained(ckpt: Path) -> RunRecord | None:
    """The training run a finetuned detector loads: ``ckpt`` or the nearest folder above it
    (a checkpoint file sits in the run's ``checkpoints/``) that has a record."""
    for folder in [ckpt, *ckpt.parents][:4]:
        record = record_or_hydra(folder)
        if record is not None:
            return record
    return None


def _judges(record: RunRecord) -> Iterator[str | None]:
    models = _at(record.config, "judges.models")
    if isinstance(models, list):
        for one in models:
            if isinstance(one, dict):
                yield _llm(one.get("llm"), f"the study's judge ({one.get('name') or '?'})")


def _data(record: RunRecord) -> str | None:
    data = _at(record.config, "data")
    if isinstance(data, dict) and data.get("kind") == "embedded":
        return "benevaudit's scripted corpus in place of a generated or human-labelled one"
    return None


def stand_ins(record: RunRecord | None) -> list[str]:
    """What in this run stands in for the study's models and data; [] for a real run or one
    whose record is unknown."""
    if record is None:
        return []
    found: list[str | None] = [*_detector(record.config), _data(record)]
    if record.entrypoint == "probe":
        found += _judges(record)
    if record.entrypoint == "train":
        found.append(_encoder(_at(record.config, "model.source")))
    elif record.entrypoint in ("evaluate", "attribute") and _at(record.config, "ckpt"):
        trained = _trained(Path(str(_at(record.config, "ckpt"))))   # the model is the training run's
        found.append(_encoder(_at(trained.config, "model.source")) if trained else None)
    seen: list[str] = []
    for item in found:
        if item and item not in seen:
            seen.append(item)
    return seen


def marked(label: str, record: RunRecord | None) -> str:
    """``label``, followed by :data:`MARK` when the run stood in for the study."""
    return f"{label} {MARK}" if stand_ins(record) else label
