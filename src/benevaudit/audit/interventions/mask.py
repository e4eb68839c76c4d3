"""``mask`` (M): cue words replaced by ``[unused0]`` in agent turns.

Why: if the classifier still separates the classes with its own top cue words hidden, it
relies on more than those words. A cue is any word of the union of the three classes' top-k
lexicons; a match is a whole word of :data:`benevaudit.text.WORD_RE`, case-insensitive
(``Sweetie`` matches ``sweetie``; ``don`` does not match inside ``don't``). User turns stay.

The edit is a few RE2 passes over all agent texts of a batch. RE2 has no look-around, so a
match also consumes the character before and after the cue and writes them back; a cue
directly after a replaced one (``you you``) lost that character to the previous match and is
caught by a second pass, where its neighbour is already ``[unused0]``.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benevaudit.audit.interventions.base import Edit, LexiconIntervention, cue_vocab
from benevaudit.audit.interventions.turns import scatter_texts, view_turns, with_texts
from benevaudit.text import MASK_TOKEN

_W = r"\pL\pN_"
_APOS = "'’"
_BEFORE = rf"(^|[^{_W}{_APOS}]|(?:^|[^{_W}])[{_APOS}])"   # a word starts here (WORD_RE's view)
_AFTER = rf"($|[^{_W}{_APOS}]|[{_APOS}](?:[^{_W}]|$))"    # and ends here
_KEEP = "\ue001"                                          # marks an in-word apostrophe


@dataclasses.dataclass(frozen=True)
class Mask(LexiconIntervention):
    name: ClassVar[str] = "mask"

    def apply(self, batch: pa.RecordBatch, seed: int, state: Any) -> Edit:
        view = view_turns(batch)
        rows = np.flatnonzero(view.is_agent)
        texts = pc.take(view.text, pa.array(rows))
        edited = mask_cues(texts, cue_vocab(self.cues, self.k))
        masked = (pc.sum(pc.count_substring(edited, MASK_TOKEN)).as_py() or 0) - (
            pc.sum(pc.count_substring(texts, MASK_TOKEN)).as_py() or 0)
        return Edit(with_texts(batch, view, scatter_texts(view, rows, edited)),
                    Counter(masked_words=masked))


def mask_cues(texts: pa.StringArray, vocab: list[str]) -> pa.StringArray:
    """Every whole-word, case-insensitive occurrence of a ``vocab`` word → ``[unused0]``."""
    words = sorted((w for w in vocab if re.match(r"\w", w)), key=len, reverse=True)
    marks = [w for w in vocab if len(w) == 1 and not re.match(r"[\w\s]", w)]
    if words:
        alternation = "|".join(re.escape(w) for w in words)
        pattern = f"{_BEFORE}(?i:{alternation}){_AFTER}"
        for _ in range(2):
            texts = pc.replace_substring_regex(texts, pattern=pattern,
                                               replacement=rf"\1{MASK_TOKEN}\2")
    plain = [m for m in marks if m not in _APOS]
    if plain:
        texts = pc.replace_substring_regex(texts, pattern="[" + "".join(
            re.escape(m) for m in plain) + "]", replacement=MASK_TOKEN)
    quotes = [m for m in marks if m in _APOS]
    if quotes:  # an apostrophe between word characters belongs to the word: protect it first
        if pc.any(pc.match_substring(texts, _KEEP)).as_py():
            raise ValueError("an agent turn contains U+E001, which masking reserves as a marker; "
                             "remove it from the corpus")
        for _ in range(2):
            texts = pc.replace_substring_regex(texts, pattern=rf"([{_W}])([{_APOS}])([{_W}])",
                                               replacement=rf"\1{_KEEP}\2\3")
        for _ in range(2):
            texts = pc.replace_substring_regex(texts, pattern=f"([^{_KEEP}]|^)[{''.join(quotes)}]",
                                               replacement=rf"\1{MASK_TOKEN}")
        texts = pc.replace_substring(texts, pattern=_KEEP, replacement="")
    return texts
