"""``detector=finetuned``: the audit's own classifier on the evaluation set.

One whole-dialogue unit per dialogue: ``pred`` and class probabilities, flagged when pred is OB
or BB. Its sequence settings (``max_length``, ``head_tokens``) are the training run's, where its
config is there, unless the detector block sets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from benevaudit.detectors.base import Checkpoint, Detector, DialogueResult, UnitVerdict
from benevaudit.detectors.registry import DETECTORS, BuildContext, DetectorKind
from benevaudit.detectors.spec import FinetunedSpec
from benevaudit.detectors.units import Unit
from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import CLASSES, Dialogue



class TrainedSequence(BaseModel):
    """The sequence settings of the training run's recorded ``model`` block, whichever version
    wrote it (other keys ignored); a checkpoint without its run's config gets the default
    model's (``conf/model/minilm.yaml``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    max_length: int = 512
    head_tokens: int = 128


def trained_sequence(run: Path | None) -> TrainedSequence:
    """The training run's sequence settings, when its config is there."""
    if run is None or not (run / ".hydra" / "config.yaml").is_file():
        return TrainedSequence()
    recorded = yaml.safe_load((run / ".hydra" / "config.yaml").read_text()) or {}
    model = recorded.get("model") if isinstance(recorded, dict) else None
    return TrainedSequence.model_validate(model if isinstance(model, dict) else {})


class FinetunedDetector(Detector):
    """The trained three-way classifier read as a detector (one unit per dialogue)."""

    unit = "dialogue"

    def __init__(self, spec: FinetunedSpec, checkpoint: Checkpoint | None, seed: int) -> None:
        self.checkpoint = needs_checkpoint(checkpoint)
        self.name, self.batch_size, self.seed = spec.name, spec.batch_size, seed
        self.max_length, self.head_tokens = spec.max_length, spec.head_tokens  # None: the run's

    def detect(self, dialogues: Sequence[Dialogue], progress: bool = False,
               batch_dialogues: int = 8) -> list[DialogueResult]:
        """Every dialogue in one evaluation pass (the model is loaded once)."""
        out = []
        for d, probs in zip(dialogues, self.class_probs(dialogues), strict=True):
            p = {c: float(v) for c, v in zip(CLASSES, probs, strict=True)}
            pred = max(CLASSES, key=lambda c: p[c])
            out.append(DialogueResult(id=d.id, flagged=pred != "N", unit_scores=[p["OB"] + p["BB"]],
                                      unit_flags=[pred != "N"], unit_turns=[-1], invalid_raw=[],
                                      pred=pred, probs=p))
        return out

    def class_probs(self, dialogues: Sequence[Dialogue]) -> Any:
        """Class probabilities ``[N, 3]`` (N, OB, BB) from the trained classifier."""
        weights, run = self.checkpoint.locate(self.checkpoint.path)
        trained = trained_sequence(run)
        max_length = trained.max_length if self.max_length is None else self.max_length
        head_tokens = trained.head_tokens if self.head_tokens is None else self.head_tokens
        # torch and Lightning: loaded only when the classifier scores
        from benevaudit.audit.datamodule import DialogueDataModule
        from benevaudit.audit.evaluation import evaluate_classifier

        model, tokenizer = self.checkpoint.load(weights)
        dm = DialogueDataModule({"test": list(dialogues)}, tokenizer, max_length, head_tokens,
                                eval_batch_size=self.batch_size, seed=self.seed)
        dm.setup()
        return evaluate_classifier(model, dm.eval_dataloader("test"), dialogues, "test").probs

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        """Whole-dialogue units scored like ``detect``: flag = pred in {OB, BB}."""
        return [UnitVerdict(r.unit_scores[0], r.unit_flags[0], probs=r.probs)
                for r in self.detect([u.dialogue for u in units])]


def needs_checkpoint(checkpoint: Checkpoint | None) -> Checkpoint:
    if checkpoint is None or not checkpoint.path:
        raise ConfigError("detector=finetuned needs ckpt=<train run directory | its model/ "
                          "directory | a .ckpt file>")
    return checkpoint


def build_finetuned(spec: FinetunedSpec, context: BuildContext) -> FinetunedDetector:
    return FinetunedDetector(spec, context.checkpoint, context.seed)


def record_finetuned(spec: FinetunedSpec, context: BuildContext, dialogues: Sequence[Dialogue],
                     request_log: RequestLog) -> None:
    """The weights each dialogue would be read by: no chat request, tokenized at scoring time."""
    checkpoint = needs_checkpoint(context.checkpoint)
    weights, _ = checkpoint.locate(str(checkpoint.path))
    for d in dialogues:
        request_log.record_opaque(str(weights), "read by the trained encoder's own "
                                  "tokenizer at scoring time", id=d.id, detector=spec.name)


KIND = DetectorKind(build_finetuned, record_finetuned)
DETECTORS.add("finetuned", FinetunedSpec, KIND)
