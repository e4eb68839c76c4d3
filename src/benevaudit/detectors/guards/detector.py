"""A generative safety guard behind the ``Detector`` interface, whatever its format.

Two ways to read a guard, as its card documents:
- ``score``: the log-probabilities of its two label continuations (``unsafe``/``safe``,
  ``<score> yes``/``<score> no``), each after the guard's assistant prefill (what the model
  writes before its label: Llama Guard 3's blank line), from ``ChatModel.score``, normalised
  over the two; the unit is flagged when the positive label's share is above the threshold
  (0.5). No reply is parsed, so no unit is invalid.
- ``generate``: a greedy reply parsed for its verdict (WildGuard, Qwen3Guard, Granite Guardian
  4.1); a reply with no verdict is an invalid unit, kept with its raw text.

Guards that name what they found (Llama Guard 3's S1-S14, Qwen3Guard's categories) keep it per
unit: parsed from the reply in ``generate`` mode; in ``score`` mode, with ``categories=True``,
the flagged units' replies are generated greedily for their category line (vLLM finds their
prompts in its prefix cache from scoring; hf reuses what consecutive prompts share).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from benevaudit.detectors.base import Detector, UnitVerdict
from benevaudit.detectors.guards.registry import GUARD_FORMATS, guard_format
from benevaudit.detectors.registry import DETECTORS, BuildContext, DetectorKind, record_by_running
from benevaudit.detectors.units import Unit, make_units
from benevaudit.llm import ChatModel, Conversation, Sampling, build_from_block
from benevaudit.llm.dry_run import RequestLog
from benevaudit.llm.verdicts import read_scores, read_text, softmax_rows
from benevaudit.schema import Dialogue

if TYPE_CHECKING:   # the spec module lists this package's kinds, so it is read after it
    from benevaudit.detectors.spec import GuardSpec


def two_way(logp: np.ndarray) -> np.ndarray:
    """P(positive) from log-probabilities ``[N, 2]`` (positive first), normalised over the two."""
    return softmax_rows(logp)[:, 0]  # [N]


class GuardDetector(Detector):
    """A generative guard read by label scoring or by parsing its greedy reply: its format
    (``detector.kind``) says how to ask, its spec how to read the answer."""

    def __init__(self, spec: GuardSpec, model: ChatModel) -> None:
        self.name, self.kind, self.model = spec.name, spec.kind, model
        self.format = guard_format(spec.kind)
        self.unit, self.aggregation, self.threshold = spec.unit, spec.aggregation, spec.threshold
        self.mode, self.criteria, self.max_tokens = spec.mode, spec.criteria, spec.max_tokens
        self.categories = spec.categories and self.format.categories is not None
        self.replies = self.mode == "generate" or self.categories
        self.choices = [spec.score_prefill + c for c in self.format.choices]  # scored continuations
        lenient = self.format.lenient if spec.parser == "lenient" else None
        self.parse = lenient or self.format.parse   # the spec refuses lenient where there is none

    def prompt(self, unit: Unit) -> Conversation:
        if self.format.criteria:
            return self.format.prompt(unit.turns, self.criteria)
        return self.format.prompt(unit.turns)

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        """Verdicts in unit order. Engines with a prefix cache (vLLM, an OpenAI-compatible
        vLLM server) get the units in turn waves: every dialogue's first unit, then every
        second unit, ... so each turn's prefix is cached before the turn that extends it. The
        hf backend keeps one dialogue's units together, as its single-slot reuse needs."""
        if not units or self.model.name not in ("vllm", "openai"):
            return self._score(units)
        position: dict[str, int] = {}
        waves: dict[int, list[int]] = {}
        for i, u in enumerate(units):
            k = position[u.dialogue.id] = position.get(u.dialogue.id, -1) + 1
            waves.setdefault(k, []).append(i)
        out: list[UnitVerdict | None] = [None] * len(units)
        for k in sorted(waves):
            for i, v in zip(waves[k], self._score([units[i] for i in waves[k]]), strict=True):
                out[i] = v
        return [v for v in out if v is not None]

    def _score(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        if not units:
            return []
        convs = [self.prompt(u) for u in units]
        greedy = Sampling(temperature=0.0, max_tokens=self.max_tokens)
        if self.mode == "score":
            read = read_scores(self.model, convs, self.choices, (True, False))
            out = [UnitVerdict(v.probs[0], v.probs[0] > self.threshold) for v in read]
            hits = [i for i, v in enumerate(out) if v.flag] if self.categories else []
            if hits:  # in unit order, so a dialogue's flagged turns extend one another
                for i, r in zip(hits, self.model.chat([convs[i] for i in hits], greedy)):
                    out[i] = UnitVerdict(out[i].score, True, r.text,
                                         categories=self._found(r.text))
            return out
        return [UnitVerdict.invalid(v.raw) if not v.valid
                else UnitVerdict(float(bool(v.verdict)), bool(v.verdict), v.raw,
                                 categories=self._found(v.raw) if v.verdict else ())
                for v in read_text(self.model, convs, greedy, self.parse)]

    def _found(self, text: str) -> tuple[str, ...]:
        found = self.format.categories
        return found(text) if self.categories and found is not None else ()

    def close(self) -> None:
        self.model.close()


def guard_llm_block(spec: GuardSpec) -> dict[str, Any]:
    """The guard's llm block, its unset keys left out. On the guard's own weights a shipped chat
    template that builds the guard instruction itself (which would wrap the already-built prompt
    a second time) is replaced by a role-only one; Granite Guardian 4.1 keeps its own, which
    only frames roles. Any other model keeps its own template, as the embedded stand-in does."""
    llm = spec.llm.framed_by(guard_format(spec.kind).template, spec.checkpoint)
    return llm.model_dump(exclude_none=True)


def build_guard(spec: GuardSpec, context: BuildContext) -> GuardDetector:
    return GuardDetector(spec, build_from_block(guard_llm_block(spec), cache=context.cache))


def record_guard(spec: GuardSpec, context: BuildContext, dialogues: Sequence[Dialogue],
                 request_log: RequestLog) -> None:
    """One request per unit, in turn order."""
    detector = build_guard(spec, context)
    record_by_running(detector, dialogues, request_log, lambda d: [
        {"unit": k} for k in range(len(make_units(d, detector.unit)))])


KIND = DetectorKind(build_guard, record_guard)
# every guard is a detector kind, its block a GuardSpec (or the spec its format names); the spec
# is named, not imported: the spec module lists the guards, so it is read after this module
DETECTORS.family(GUARD_FORMATS, "benevaudit.detectors.spec:GuardSpec", KIND)
