"""Word error rate of Whisper's transcripts against the API's own transcripts.

Both sides are normalised the same way (lower case, punctuation and extra spaces removed), then
jiwer aligns each pair: substitutions, deletions and insertions over the reference words, the
API's transcript being the reference. Corpus WER is the errors of all pairs over all their
reference words (jiwer's ``wer`` over the lists), so it adds up per reply: the report resamples
those per-reply counts for its interval. Pairs whose reference is empty are left out.

FairDialogue's rows carry the speaker's ``attribute`` and ``group``; WER is also written per
group (``asr/wer/<attribute>/<group>``), where a transcriber that hears one group's replies
worse would bias what the parser reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import jiwer
import numpy as np

from benevaudit.metrics.resample import resample

NORMALISE = jiwer.Compose([jiwer.ToLowerCase(), jiwer.RemovePunctuation(),
                           jiwer.RemoveMultipleSpaces(), jiwer.Strip(),
                           jiwer.ReduceToListOfListOfWords()])
WRONG = {"substitute", "delete"}     # alignment chunks whose reference words were missed


def word_error_rate(references: list[str], hypotheses: list[str]) -> float:
    """Corpus WER of ``hypotheses`` against ``references`` after normalisation."""
    return float(jiwer.wer(references, hypotheses, reference_transform=NORMALISE,
                           hypothesis_transform=NORMALISE))


def pair_counts(references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
    """[N, 2] per pair: (substitutions + deletions + insertions, reference words). Their sums'
    ratio is :func:`word_error_rate` of the lists."""
    if not references:
        return np.zeros((0, 2))
    out = jiwer.process_words(list(references), list(hypotheses),
                              reference_transform=NORMALISE, hypothesis_transform=NORMALISE)
    counts = np.zeros((len(references), 2))
    for i, (chunks, words) in enumerate(zip(out.alignments, out.references, strict=True)):
        counts[i, 0] = sum(c.ref_end_idx - c.ref_start_idx if c.type in WRONG
                           else c.hyp_end_idx - c.hyp_start_idx if c.type == "insert" else 0
                           for c in chunks)
        counts[i, 1] = len(words)
    return counts


def scored_pairs(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows holding both a Whisper ``transcript`` and a non-empty ``api_transcript``."""
    return [r for r in rows if r.get("api_transcript") and r.get("transcript") is not None
            and NORMALISE(str(r["api_transcript"]))[0]]


def group_cells(pairs: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Metric-name suffix -> the pairs it covers: ``""`` all, ``/<attribute>/<group>`` each
    speaker group where rows name one."""
    cells: dict[str, list[int]] = {"": list(range(len(pairs)))}
    for i, row in enumerate(pairs):
        if row.get("attribute") is not None and row.get("group") is not None:
            cells.setdefault(f"/{row['attribute']}/{row['group']}", []).append(i)
    return cells


def wer_resamples(rows: Iterable[Mapping[str, Any]], n_resamples: int, seed: int
                  ) -> dict[str, tuple[float, np.ndarray]]:
    """``asr/wer`` and ``asr/wer/<attribute>/<group>`` as (value, [R] bootstrap resamples):
    per-reply (errors, reference words) summed over items (``task``, ``item``) drawn with
    replacement, an item's replies under every group together."""
    pairs = scored_pairs(rows)
    if not pairs:
        return {}
    counts = pair_counts([str(r["api_transcript"]) for r in pairs],
                         [str(r["transcript"]) for r in pairs])            # [N, 2]
    items = np.array([f"{r.get('task')}\x1f{r.get('item')}" for r in pairs], dtype=object)
    out = {}
    for suffix, index in group_cells(pairs).items():
        units = np.unique(items[index], return_inverse=True)[1]
        sums = resample(units, counts[index], n_resamples, seed)          # [R, 2]
        full = counts[index].sum(0)
        out[f"asr/wer{suffix}"] = (float(full[0] / full[1]), sums[:, 0] / sums[:, 1])
    return out


def wer_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """``asr/wer`` and ``asr/wer_pairs`` over the rows holding both transcripts and, where rows
    name an ``attribute`` and ``group``, ``asr/wer/<attribute>/<group>`` and
    ``asr/wer_pairs/<attribute>/<group>``; empty where no row has both."""
    pairs = scored_pairs(rows)
    if not pairs:
        return {}
    counts = pair_counts([str(r["api_transcript"]) for r in pairs],
                         [str(r["transcript"]) for r in pairs])
    out = {}
    for suffix, index in group_cells(pairs).items():
        errors, words = counts[index].sum(0)
        out[f"asr/wer{suffix}"] = float(errors / words)
        out[f"asr/wer_pairs{suffix}"] = float(len(index))
    return out
