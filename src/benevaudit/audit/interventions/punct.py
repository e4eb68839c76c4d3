"""``punct`` (P): affective punctuation folded to a period, in both speakers' turns.

Why: exclamation marks, questions and ellipses carry tone, and tone is exactly what separates
benevolent from overt bias; folding them tests whether a classifier reads tone from
punctuation alone. Words are never touched: the edit works on the words of
:data:`benevaudit.text.WORD_RE`, where an apostrophe inside a word (don't, O'Neil) is part of
the word and every other punctuation mark is a word of its own.

The rule:
- affective marks are ``! ? , ; :``, straight and curly double and single quotes (``" “ ” „ '
  ‘ ’ ‚ « »``; an apostrophe inside a word is not a separate mark, so it stays), the ellipsis
  ``…``, and the dashes ``- ‐ ‑ ‒ – — ―``;
- an apostrophe (``' ’``), hyphen (``- ‐ ‑``) or en dash with a word character directly on both
  sides (don't, well-being, 3–5) is in-word and stays; every other one is punctuation;
- a run of adjacent marks with no space between them (``?!``, ``...``, ``!"``, ``--``) becomes a
  single period when it holds an affective mark or two or more periods; a lone period stays.

``fold_apostrophes`` (default false) is the study's literal list, "quotation marks and
apostrophes": every apostrophe folds, in-word ones too (``don't`` -> ``don.t``). The default
keeps in-word apostrophes because they are spelling, not tone: folding them splits every
contraction and possessive into two words around a false sentence end, which changes the words
that lexicons rank and that masking (M) and injection (S) match, and the sentence positions S
draws from. Quote-like apostrophes (``'so'``, ``’tis``) fold either way.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions.base import Edit, Intervention
from benevaudit.audit.interventions.turns import view_turns, with_texts

_WORD = r"\pL\pN_"
_JOINERS = "'’\\-‐‑–"                 # in-word when glued between word characters
_AFFECTIVE = "!?,;:\"“”„‟‘‚‛«»…—―‒"     # always affective
_MARKS = _AFFECTIVE + _JOINERS + "."
_RUN = "\ue002"                         # stands for a folded run until the runs are counted
# A run is a maximal stretch of marks. RE2 matches leftmost-first and greedily, so pass 1 sees
# every run from its first mark: two or more marks, or one affective mark, fold. What is left
# is a lone period (kept) or a lone joiner, which folds unless a word character sits on both
# sides: pass 2 folds it after a non-word character, pass 3 before one.
def _passes(affective: str, joiners: str) -> tuple[tuple[str, str], ...]:
    return ((f"[{_MARKS}]{{2,}}|[{affective}]", _RUN),
            (f"(^|[^{_WORD}{_MARKS}])[{joiners}]", rf"\1{_RUN}"),
            (f"[{joiners}]([^{_WORD}{_MARKS}]|$)", rf"{_RUN}\1"))


PASSES = _passes(_AFFECTIVE, _JOINERS)
# fold_apostrophes: an apostrophe is affective wherever it stands, so in-word ones fold too
PASSES_APOSTROPHES = _passes(_AFFECTIVE + "'’", "\\-‐‑–")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Punct(Intervention):
    fold_apostrophes: bool         # conf/intervention/punct.yaml
    name: ClassVar[str] = "punct"

    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        view = view_turns(batch)
        text, runs = fold(view.text, self.fold_apostrophes)
        return Edit(with_texts(batch, view, text), Counter(punct_replaced=runs))


def fold(texts: pa.StringArray, fold_apostrophes: bool = False) -> tuple[pa.StringArray, int]:
    """Texts with every affective run folded to one period, and the number of runs folded."""
    if len(texts) and pc.any(pc.match_substring(texts, _RUN)).as_py():
        raise ValueError("a turn contains U+E002, which punctuation folding reserves as a "
                         "marker; remove it from the corpus")
    for pattern, replacement in PASSES_APOSTROPHES if fold_apostrophes else PASSES:
        texts = pc.replace_substring_regex(texts, pattern=pattern, replacement=replacement)
    runs = pc.sum(pc.count_substring(texts, _RUN)).as_py() or 0
    return pc.replace_substring(texts, pattern=_RUN, replacement="."), int(runs)
