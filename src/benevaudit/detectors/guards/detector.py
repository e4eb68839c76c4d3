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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benevaudit.detectors.base import Detector, UnitVerdict
from benevaudit.detectors.guards.registry import GUARD_FORMATS, GUARD_KINDS, guard_format
from benevaudit.detectors.registry import BuildContext, DetectorKind, record_by_running
from benevaudit.detectors.units import Unit, check_unit, decision_rule, make_units
from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel, Conversation, Sampling, build_from_block
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import Dialogue
from benevaudit.llm.verdicts import read_scores, read_text, softmax_rows


def two_way(logp: np.ndarray) -> np.ndarray:
    """P(positive) from log-probabilities ``[N, 2]`` (positive first), normalised over the two."""
    return softmax_rows(logp)[:, 0]  # [N]


class GuardDetector(Detector):
    """A generative guard read by label scoring or by parsing its greedy reply."""

    def __init__(self, name: str, kind: str, model: ChatModel, unit: str = "context",
                 aggregation: str = "any", threshold: float = 0.5, mode: str | None = None,
                 criteria: str = "social_bias", max_tokens: int | None = None,
                 categories: bool = True, score_prefill: str | None = None,
                 parser: str = "released") -> None:
        self.name, self.kind, self.model = name, kind, model
        self.format = guard_format(kind)
        self.unit, self.aggregation, self.threshold = check_unit(unit), aggregation, threshold
        self.mode = mode or self.format.mode
        if self.mode not in ("score", "generate"):
            raise ConfigError(f"guard mode must be 'score' or 'generate', got {self.mode!r}")
        self.criteria = criteria
        self.max_tokens = max_tokens or self.format.max_tokens
        self.categories = categories and self.format.categories is not None
        self.replies = self.mode == "generate" or self.categories
        prefill = self.format.prefill if score_prefill is None else score_prefill
        self.choices = [prefill + c for c in self.format.choices]  # scored continuations
        self.parse = self._parser(parser)

    def _parser(self, parser: str) -> Callable[[str], bool | None]:
        """The released reader, or the guard's lenient one where it has one."""
        if parser == "released":
            return self.format.parse
        if parser == "lenient" and self.format.lenient is not None:
            return self.format.lenient
        lenient = [k for k, f in GUARD_FORMATS.items() if f.lenient is not None]
        raise ConfigError(f"detector.parser={parser!r} for guard {self.kind!r}: expected "
                          f"'released' (every guard) or 'lenient' (only {lenient})")

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
                else UnitVerdict(float(v.verdict), bool(v.verdict), v.raw,
                                 categories=self._found(v.raw) if v.verdict else ())
                for v in read_text(self.model, convs, greedy, self.parse)]

    def _found(self, text: str) -> tuple[str, ...]:
        return self.format.categories(text) if self.categories else ()

    def close(self) -> None:
        self.model.close()


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


def build_guard(spec: dict[str, Any], context: BuildContext) -> GuardDetector:
    unit, aggregation = decision_rule(spec)
    model = build_from_block(guard_llm_block(spec), cache=context.cache)
    return GuardDetector(spec["name"], spec["kind"], model, unit=unit, aggregation=aggregation,
                         threshold=float(spec["threshold"]), mode=spec["mode"],
                         criteria=spec["criteria"], max_tokens=spec["max_tokens"],
                         categories=bool(spec["categories"]), score_prefill=spec["score_prefill"],
                         parser=spec["parser"])


def record_guard(spec: dict[str, Any], context: BuildContext, dialogues: Sequence[Dialogue],
                 request_log: RequestLog) -> None:
    """One request per unit, in turn order."""
    detector = build_guard(spec, context)
    record_by_running(detector, dialogues, request_log, lambda d: [
        {"unit": k} for k in range(len(make_units(d, detector.unit)))])


KIND = DetectorKind(GUARD_KINDS, build_guard, record_guard)
