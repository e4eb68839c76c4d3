"""Prompted LLM judges, alone or as the study's ensemble.

Class probabilities come two ways:
- ``score`` (fast, the default): one pass over the prompt scores the three label continuations
  ``N``, ``OB``, ``BB``; the probabilities are a softmax over their total log-probabilities
  (normalised over the three labels). Never invalid.
- ``generate`` (the study's): a sampled reply (temperature 0.6, top-p 0.9, up to 2,000 tokens)
  is parsed for its label; the probabilities are one-hot on that label. A reply with no label
  is invalid and kept with its raw text.

The ensemble (the study's eq. 1) averages the judges' class probabilities and takes the
arg-max; a judge whose reply was invalid is left out of the average for that dialogue, and a
dialogue no judge labelled is invalid. In generate mode the average is over one-hot votes, so
it can tie (three judges voting N, OB, BB; two valid judges that disagree). ``ties`` decides:
- ``order`` (default): the first tied class in N, OB, BB order, so a split vote flags a
  dialogue only when the bias classes hold the plurality;
- ``first_judge``: the vote of the first judge of the group (in its listed order) among the tied;
- ``invalid``: the dialogue gets no verdict (counted invalid, never as a class).

Judges run one after another, each model closed before the next is built, so one accelerator
holds one engine at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from benevaudit.detectors.base import DialogueResult, Detector, UnitVerdict
from benevaudit.detectors.judge_prompts import judge_prompt, parse_label
from benevaudit.detectors.registry import DETECTORS, BuildContext, DetectorKind, record_by_running
from benevaudit.detectors.spec import JudgeModel, JudgeSpec
from benevaudit.detectors.units import Unit, make_units
from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Conversation, build_from_block
from benevaudit.llm.dry_run import RequestLog
from benevaudit.llm.judge import Judge, Reading
from benevaudit.schema import CLASSES, Dialogue


JudgeFactory = Callable[[], ChatModel]


def verdict_from_probs(probs: Sequence[float], raw: str | None = None) -> UnitVerdict:
    """Flag = arg-max in {OB, BB}; score = P(OB) + P(BB)."""
    p = {c: float(v) for c, v in zip(CLASSES, probs, strict=True)}
    pred = max(CLASSES, key=lambda c: p[c])
    return UnitVerdict(p["OB"] + p["BB"], pred != "N", raw, p)


class JudgeDetector(Detector):
    """One or several judges reading whole dialogues with one prompt strategy."""

    unit = "dialogue"

    def __init__(self, spec: JudgeSpec, judges: Sequence[tuple[str, JudgeFactory]],
                 chunk: int = 8) -> None:
        if not judges:
            raise ConfigError("a judge detector needs at least one judge (the judges group)")
        self.name, self.judges, self.strategy = spec.name, list(judges), spec.strategy
        self.demographics, self.mode, self.ties = spec.demographics, spec.mode, spec.ties
        self.sampling = spec.sampling.sampling()
        self.chunk, self.aggregation = chunk, spec.aggregation

    def judge_of(self, name: str, factory: JudgeFactory) -> Judge[Unit]:
        """One judge of the group: its model, the strategy's prompt over a whole-dialogue
        unit, and the mode's reading (label scores, or the ``Label:`` line parsed)."""
        reasoned = self.mode == "generate"

        def prompt(unit: Unit) -> Conversation:
            return judge_prompt(unit.dialogue, self.strategy, self.demographics,
                                reasoned=reasoned)

        reading = (Reading.text(parse_label, self.sampling) if reasoned
                   else Reading.scores(CLASSES))
        return Judge(name, factory, prompt, reading)

    def judge_units(self, judge: Judge[Unit], units: Sequence[Unit]) -> list[UnitVerdict]:
        """One judge's verdicts on whole-dialogue units."""
        verdicts = judge.verdicts(units)
        if self.mode == "score":
            return [verdict_from_probs(v.probs) for v in verdicts]
        return [UnitVerdict.invalid(v.raw) if not v.valid else
                verdict_from_probs([float(c == v.verdict) for c in CLASSES], v.raw)
                for v in verdicts]

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        """Single-judge path (used by ``Detector.detect`` callers that pass units directly)."""
        judge = self.judge_of(*self.judges[0])
        try:
            return self.judge_units(judge, units)
        finally:
            judge.close()

    def detect(self, dialogues: Sequence[Dialogue], progress: bool = False,
               batch_dialogues: int = 8) -> list[DialogueResult]:
        units = [make_units(d, "dialogue")[0] for d in dialogues]
        per_judge: dict[str, list[UnitVerdict]] = {}
        for name, factory in self.judges:
            judge = self.judge_of(name, factory)   # built on its first chunk, closed after
            try:
                verdicts: list[UnitVerdict] = []
                for start in tqdm(range(0, len(units), self.chunk), disable=not progress,
                                  desc=f"{self.name} · {name} ({self.mode})", unit="chunk"):
                    verdicts += self.judge_units(judge, units[start:start + self.chunk])
                per_judge[name] = verdicts
            finally:
                judge.close()
        return [self.combine(d, u, {n: v[i] for n, v in per_judge.items()})
                for i, (d, u) in enumerate(zip(dialogues, units, strict=True))]

    def combine(self, dialogue: Dialogue, unit: Unit,
                verdicts: dict[str, UnitVerdict]) -> DialogueResult:
        """The ensemble decision (eq. 1) with every judge's own probabilities kept."""
        valid = [v for v in verdicts.values() if v.valid]
        extra: dict[str, object] = {}
        for name, v in verdicts.items():
            if len(verdicts) > 1:
                extra[f"pred_{name}"] = (max(CLASSES, key=lambda c: v.probs[c])
                                         if v.valid else None)
                extra.update({f"prob_{name}_{c}": v.probs.get(c) for c in CLASSES})
            if self.mode == "generate":
                extra[f"raw_{name}" if len(verdicts) > 1 else "raw"] = v.raw
        pred = None
        if valid:
            mean = [float(np.mean([v.probs[c] for v in valid])) for c in CLASSES]
            combined = verdict_from_probs(mean)
            tied = [c for c, m in zip(CLASSES, mean, strict=True) if m == max(mean)]
            if len(tied) > 1:
                extra["ensemble_tie"] = "+".join(tied)
                pred, combined = self._break_tie(tied, valid, mean, combined)
        else:
            combined = UnitVerdict.invalid("; ".join(v.raw or "" for v in verdicts.values()))
        result = self.decide(dialogue, [unit], [combined])
        if pred is not None:
            result.pred = pred
        result.extra = extra
        return result

    def _break_tie(self, tied: list[str], valid: list[UnitVerdict], mean: list[float],
                   combined: UnitVerdict) -> tuple[str | None, UnitVerdict]:
        """(pred, verdict) for a tied average under ``self.ties``."""
        if self.ties == "invalid":
            return None, UnitVerdict.invalid("ensemble tie: " + "+".join(tied))
        if self.ties == "first_judge":
            pred = next(max(CLASSES, key=lambda c: v.probs[c]) for v in valid
                        if max(CLASSES, key=lambda c: v.probs[c]) in tied)
        else:
            pred = tied[0]  # CLASSES order: N, OB, BB
        return pred, UnitVerdict(mean[1] + mean[2], pred != "N", None,
                                 dict(zip(CLASSES, mean, strict=True)))


def judge_llm_blocks(spec: JudgeSpec, judges: Sequence[JudgeModel]
                     ) -> list[tuple[str, dict[str, Any]]]:
    """(name, llm block) per judge, each block as its group sets it; with one judge, the
    non-null keys of ``detector.llm`` override it."""
    overrides = spec.llm.model_dump(exclude_none=True)
    if spec.judge is not None:
        names = [j.name for j in judges]
        if spec.judge not in names:
            raise ConfigError(f"detector.judge={spec.judge!r} is not in the judges group; "
                              f"valid: {names}")
        judges = [j for j in judges if j.name == spec.judge]
    if overrides and len(judges) > 1:
        raise ConfigError(f"detector.llm.* overrides one judge, but the judges group lists "
                          f"{len(judges)}; pick one with detector.judge=<name> "
                          f"({[j.name for j in judges]})")
    return [(j.name, j.llm.overridden(overrides)) for j in judges]


def build_judge(spec: JudgeSpec, context: BuildContext) -> JudgeDetector:
    """The judge detector: one model factory per judge of the group, each built when its turn
    comes."""
    factories = [(name, (lambda b=block: build_from_block(b, cache=context.cache)))
                 for name, block in judge_llm_blocks(spec, context.judges)]
    return JudgeDetector(spec, factories)


def record_judge(spec: JudgeSpec, context: BuildContext, dialogues: Sequence[Dialogue],
                 request_log: RequestLog) -> None:
    """One whole-dialogue request per judge, judges in group order."""
    names = [n for n, _ in judge_llm_blocks(spec, context.judges)]
    record_by_running(build_judge(spec, context), dialogues, request_log,
                      lambda d: [{"judge": n} for n in names])


KIND = DetectorKind(build_judge, record_judge)
DETECTORS.add("judge", JudgeSpec, KIND)
