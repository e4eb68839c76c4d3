"""A detector's requests in a dry run: what each kind would send, recorded instead of sent.

Each kind records its own (``KIND.record`` of its module, see ``detectors/registry.py``): units
go in dialogue and turn order, judges in group order; ``external`` reads its predictions file
(so a bad one fails as in a real run) and sends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from benevaudit.audit.checkpoints import load_frozen, locate
from benevaudit.detectors.base import Checkpoint
from benevaudit.detectors.registry import BuildContext, kind_of
from benevaudit.detectors.spec import JudgeModel, PredictionsSpec
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import Dialogue

if TYPE_CHECKING:   # the union of the registered kinds, made once the package is read
    from benevaudit.detectors.spec import DetectorSpec


def record_detector(spec: DetectorSpec, judges: Sequence[JudgeModel], dialogues: list[Dialogue],
                    ckpt: str | None, request_log: RequestLog,
                    predictions: PredictionsSpec | None = None) -> None:
    """Every request of ``spec``'s detector over ``dialogues`` (``judges``: the judges group's
    models; ``ckpt``: the fine-tuned classifier; ``predictions``: the external block)."""
    checkpoint = Checkpoint(str(ckpt), locate, load_frozen) if ckpt else None
    context = BuildContext(list(judges), None, checkpoint, predictions)
    kind_of(spec).record(spec, context, dialogues, request_log)
