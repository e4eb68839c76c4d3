"""Word error rate of Whisper's transcripts against the API's own transcripts.

Both sides are normalised the same way (lower case, punctuation and extra spaces removed), then
jiwer's corpus WER is taken: substitutions, deletions and insertions over all reference words,
the API's transcript being the reference. Pairs whose reference is empty are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jiwer

NORMALISE = jiwer.Compose([jiwer.ToLowerCase(), jiwer.RemovePunctuation(),
                           jiwer.RemoveMultipleSpaces(), jiwer.Strip(),
                           jiwer.ReduceToListOfListOfWords()])


def word_error_rate(references: list[str], hypotheses: list[str]) -> float:
    """Corpus WER of ``hypotheses`` against ``references`` after normalisation."""
    return float(jiwer.wer(references, hypotheses, reference_transform=NORMALISE,
                           hypothesis_transform=NORMALISE))


def wer_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """``asr/wer`` and ``asr/wer_pairs`` over rows holding both a Whisper ``transcript`` and an
    ``api_transcript``; empty where no row has both."""
    pairs = [(str(r["api_transcript"]), str(r["transcript"])) for r in rows
             if r.get("api_transcript") and r.get("transcript") is not None
             and NORMALISE(str(r["api_transcript"]))[0]]
    if not pairs:
        return {}
    refs, hyps = zip(*pairs, strict=True)
    return {"asr/wer": word_error_rate(list(refs), list(hyps)), "asr/wer_pairs": float(len(pairs))}
