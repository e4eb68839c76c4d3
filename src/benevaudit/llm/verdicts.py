"""One verdict reader for every model that judges text: guards, LLM judges and CoBia's raters.

A verdict is read one of two ways:
- by label scores (``read_scores``): one pass scores each label's continuation; the
  probabilities are a softmax over the labels' total log-probabilities, and the verdict is the
  most probable label. Never invalid; ``raw`` holds the scores as JSON.
- by parsing text (``read_text``): the reply is parsed for its verdict; a reply that names none
  is *invalid* (verdict ``None``), kept with its raw text and counted (``count_invalid``), never
  mapped to a label.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from benevaudit.llm.base import ChatModel, Conversation, Sampling


@dataclass(frozen=True)
class Verdict:
    """What a model said: the verdict read (None when invalid), its raw text, and, when read by
    label scores, each label's probability in label order."""

    verdict: Hashable | None
    raw: str
    probs: tuple[float, ...] = ()

    @property
    def valid(self) -> bool:
        return self.verdict is not None


def softmax_rows(logp: np.ndarray) -> np.ndarray:
    """Row-wise softmax of log-probabilities ``[N, C]``."""
    logp = np.asarray(logp, dtype=np.float64)
    p = np.exp(logp - logp.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def read_scores(model: ChatModel, conversations: Sequence[Conversation], words: Sequence[str],
                labels: Sequence[Hashable] | None = None) -> list[Verdict]:
    """One verdict per conversation from the log-probabilities of ``words`` (one per label,
    ``labels`` in the same order; the words themselves by default)."""
    labels = list(words if labels is None else labels)
    if len(labels) != len(words):
        raise ValueError(f"{len(words)} scored words for {len(labels)} labels")
    if not conversations:
        return []
    logp = np.asarray(model.score(list(conversations), list(words)), dtype=np.float64)  # [N, C]
    out = []
    for row, probs in zip(logp, softmax_rows(logp), strict=True):
        raw = json.dumps({w: round(float(v), 4) for w, v in zip(words, row, strict=True)})
        out.append(Verdict(labels[int(row.argmax())], raw, tuple(float(p) for p in probs)))
    return out


def read_text(model: ChatModel, conversations: Sequence[Conversation], sampling: Sampling,
              parse: Callable[[str], Hashable | None]) -> list[Verdict]:
    """One verdict per conversation parsed from the model's reply; None where it names none."""
    if not conversations:
        return []
    return [Verdict(parse(c.text), c.text) for c in model.chat(list(conversations), sampling)]


def count_invalid(verdicts: Sequence[Verdict]) -> int:
    """How many verdicts could not be read."""
    return sum(not v.valid for v in verdicts)
