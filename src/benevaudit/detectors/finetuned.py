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

from benevaudit.detectors.base import Checkpoint, Detector, DialogueResult, UnitVerdict
from benevaudit.detectors.registry import BuildContext, DetectorKind
from benevaudit.detectors.units import Unit, decision_rule
from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import CLASSES, Dialogue


def _run_settings(run: Path | None) -> dict[str, Any]:
    """The training run's model settings (max_length, head_tokens), when its config is there."""
    if run is None or not (run / ".hydra" / "config.yaml").is_file():
        return {}
    cfg = yaml.safe_load((run / ".hydra" / "config.yaml").read_text()) or {}
    return {k: v for k, v in (cfg.get("model") or {}).items() if k in ("max_length", "head_tokens")}


class FinetunedDetector(Detector):
    """The trained three-way classifier read as a detector (one unit per dialogue)."""

    unit = "dialogue"

    def __init__(self, name: str, checkpoint: Checkpoint | None, max_length: int | None,
                 head_tokens: int | None, batch_size: int, seed: int) -> None:
        if checkpoint is None or not checkpoint.path:
            raise ConfigError("detector=finetuned needs ckpt=<train run directory | its model/ "
                              "directory | a .ckpt file>")
        self.name, self.checkpoint, self.batch_size, self.seed = name, checkpoint, batch_size, seed
        self.overrides = {"max_length": max_length, "head_tokens": head_tokens}

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
        settings = {"max_length": 512, "head_tokens": 128, **_run_settings(run)}
        settings.update({k: int(v) for k, v in self.overrides.items() if v is not None})
        # torch and Lightning: loaded only when the classifier scores
        from benevaudit.audit.datamodule import DialogueDataModule
        from benevaudit.audit.evaluation import evaluate_classifier

        model, tokenizer = self.checkpoint.load(weights)
        dm = DialogueDataModule({"test": list(dialogues)}, tokenizer, int(settings["max_length"]),
                                int(settings["head_tokens"]), eval_batch_size=self.batch_size,
                                seed=self.seed)
        dm.setup()
        return evaluate_classifier(model, dm.eval_dataloader("test"), dialogues, "test").probs

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        """Whole-dialogue units scored like ``detect``: flag = pred in {OB, BB}."""
        return [UnitVerdict(r.unit_scores[0], r.unit_flags[0], probs=r.probs)
                for r in self.detect([u.dialogue for u in units])]


def build_finetuned(spec: dict[str, Any], context: BuildContext) -> FinetunedDetector:
    decision_rule(spec)
    return FinetunedDetector(spec["name"], context.checkpoint, spec["max_length"],
                             spec["head_tokens"], int(spec["batch_size"]), context.seed)


def record_finetuned(spec: dict[str, Any], context: BuildContext, dialogues: Sequence[Dialogue],
                     request_log: RequestLog) -> None:
    """The weights each dialogue would be read by: no chat request, tokenized at scoring time."""
    checkpoint = context.checkpoint
    if checkpoint is None or not checkpoint.path:
        raise ConfigError("detector=finetuned needs ckpt=<train run directory | its model/ "
                          "directory | a .ckpt file>")
    weights, _ = checkpoint.locate(str(checkpoint.path))
    for d in dialogues:
        request_log.record_opaque(str(weights), "read by the trained encoder's own "
                                  "tokenizer at scoring time", id=d.id, detector=spec["name"])


KIND = DetectorKind(("finetuned",), build_finetuned, record_finetuned)
