"""A detector's requests in a dry run: what each kind would send, recorded instead of sent.

Units go in dialogue and turn order, judges in group order. ``external`` reads its predictions
file (so a bad one fails as in a real run) and sends nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from benevaudit.audit.checkpoints import locate
from benevaudit.detectors import (
    build_detector,
    decision_rule,
    external_detector,
    judge_llm_blocks,
    make_units,
)
from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run import RequestLog, scope

log = logging.getLogger(__name__)


def record_detector(spec: dict[str, Any], judges: list[dict[str, Any]], dialogues: list,
                    ckpt: Any, request_log: RequestLog,
                    predictions: dict[str, Any] | None = None) -> None:
    """Every request of ``spec``'s detector over ``dialogues`` (``judges``: the judges group's
    models; ``ckpt``: the fine-tuned classifier; ``predictions``: the external block)."""
    kind, name = spec["kind"], spec["name"]
    if kind == "external":
        external_detector(name, predictions).predictions()
        log.info("detector=external reads predictions made elsewhere: no model requests")
        return
    if kind == "finetuned":
        if not ckpt:
            raise ConfigError("detector=finetuned needs ckpt=<train run directory | its model/ "
                              "directory | a .ckpt file>")
        weights, _ = locate(str(ckpt))
        for d in dialogues:
            request_log.record_opaque(str(weights), "read by the trained encoder's own "
                                      "tokenizer at scoring time", id=d.id, detector=name)
        return
    if kind == "sequence_classifier":
        unit, _ = decision_rule(spec)
        for d in dialogues:
            for k, u in enumerate(make_units(d, unit)):
                request_log.record_text(str(spec["source"]), spec["text_format"].format(
                    user=u.user_text, agent=u.agent_text), int(spec["max_length"]),
                    append_eos=bool(spec["append_eos"]), eos_token=spec["eos_token"], id=d.id,
                    unit=k, detector=name)
        return
    names = [n for n, _ in judge_llm_blocks(spec, judges)] if kind == "judge" else []
    detector = build_detector(spec, judges, cache=None)
    try:
        for d in dialogues:
            with scope(id=d.id, detector=name):
                if names:   # one whole-dialogue request per judge, judges in group order
                    request_log.expect([{"judge": n} for n in names])
                else:
                    request_log.expect([{"unit": k} for k in
                                        range(len(make_units(d, detector.unit)))])
                detector.detect([d])
    finally:
        detector.close()
