"""From token relevance to word relevance to a per-class cue lexicon.

Merge rule (WordPiece pieces -> words of :func:`benevaudit.text.word_spans`): a word's relevance
is the sum of the relevance of the pieces whose character span *starts* inside the word's span.
[CLS], [SEP] and padding have empty spans and belong to no word; the speaker prefixes
(``[agent]: ``) are outside every word span, so their pieces are ignored. A word is kept only
when its kept pieces cover it from its first to its last character: words cut by head-and-tail
truncation, and words in the dropped middle, are left out.

Only agent-turn words are kept. Each dialogue's word relevance is divided by the mean absolute
relevance of its kept agent words, so a score reads "times the dialogue's average word" and
dialogues whose relevance happens to be on a larger scale (long, or confidently classified)
do not dominate the aggregate.

Lexicon: per class, the dialogues whose explained class (the target) is that class; each
lowercase word type scores the mean normalised relevance over its occurrences; types with
fewer than ``min_count`` occurrences are dropped; the top ``top_k`` are kept. With
``words_only`` (the default) punctuation marks never enter a lexicon: the study's cue lexicons
are words, cue masking (M) removes "whole-word matches", and a mark there would make M overlap
punctuation folding (P) and let symmetric injection (S) re-insert what P folded.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, get_args

import numpy as np
from tqdm.auto import tqdm

from benevaudit.audit.attribution import integrated_gradients, rollout
from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.store import AttributionCache, read_back
from benevaudit.audit.lexicon import Lexicon, lexicon_from_ranked
from benevaudit.encoders.encoding import encode_texts, pad_batch
from benevaudit.errors import ConfigError
from benevaudit.schema import CLASS_INDEX, CLASSES, Dialogue
from benevaudit.text import MASK_TOKEN, Span, render_turns, word_spans

log = logging.getLogger(__name__)
_WORD_START = re.compile(r"\w")

Method = Literal["rollout", "rollout_norm", "integrated_gradients"]
METHODS: tuple[str, ...] = get_args(Method)

# Token budget per batch on CPU under ``max_batch_tokens="auto"``. On CPU a single 256-token
# dialogue already keeps the cores busy, and large batches of long dialogues spill the
# [B, H, T, T] attention maps out of cache: with the packaged MiniLM on 2 cores, batch 16 at
# 512 tokens ran 1.5x slower than one dialogue at a time, while batches of ~1,024 tokens were
# as fast or faster at every length measured (64 to 512). GPUs keep the plain batch size.
CPU_BATCH_TOKENS = 1024


@dataclass
class LexiconResult:
    lexicon: Lexicon
    stats: dict[str, float] = field(default_factory=dict)


def merge_pieces(offsets: Sequence[tuple[int, int]], token_rel: Sequence[float] | np.ndarray,
                 spans: Sequence[Span]) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Word relevance by the merge rule; returns (relevance [W], kept [W] bool, pieces per word).

    offsets: per token (start, end) in the rendered text, (0, 0) for special tokens.
    """
    starts = np.array([s.start for s in spans], dtype=np.int64)
    ends = np.array([s.end for s in spans], dtype=np.int64)
    rel = np.zeros(len(spans))
    first = np.full(len(spans), np.iinfo(np.int64).max)
    last = np.full(len(spans), -1)
    pieces: list[list[int]] = [[] for _ in spans]
    for pos, ((a, b), r) in enumerate(zip(offsets, token_rel)):
        if b <= a:  # special token or padding: no characters
            continue
        w = int(np.searchsorted(starts, a, side="right")) - 1
        if w < 0 or a >= ends[w]:
            continue  # speaker prefix or newline
        rel[w] += float(r)
        first[w] = min(first[w], a)
        last[w] = max(last[w], b)
        pieces[w].append(pos)
    kept = (first == starts) & (last == ends)
    return rel, kept, pieces


def relevance_fn(method: str, tokenizer: Any, n_steps: int = 50) -> Callable[..., Any]:
    """The batched ``(model, input_ids, attention_mask, labels, target) -> Relevance`` of a method."""
    if method in ("rollout", "rollout_norm"):
        return partial(rollout.batch_relevance, normalise=method == "rollout_norm")
    if method == "integrated_gradients":
        return partial(integrated_gradients.batch_relevance, pad_id=tokenizer.pad_token_id,
                       n_steps=n_steps,
                       keep_ids=(tokenizer.cls_token_id, tokenizer.sep_token_id))
    raise ValueError(f"unknown attribution method {method!r}; expected one of {list(METHODS)}")


def batch_token_cap(setting: int | str | None, device: Any) -> int | None:
    """Resolve ``max_batch_tokens``: ``"auto"`` is :data:`CPU_BATCH_TOKENS` on CPU and no cap
    elsewhere; None or 0 means no cap; a positive integer is used as given."""
    if setting == "auto":
        return CPU_BATCH_TOKENS if getattr(device, "type", str(device)) == "cpu" else None
    if setting is None or setting == 0:
        return None
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 0:
        raise ConfigError(f"attribution.max_batch_tokens must be 'auto', null or a positive "
                          f"integer, got {setting!r}")
    return setting


def length_batches(lengths: Sequence[int], batch_size: int,
                   max_tokens: int | None = None) -> list[list[int]]:
    """Indices grouped into batches of similar length, shortest first.

    A batch holds at most ``batch_size`` items and, when ``max_tokens`` is set, at most
    ``max_tokens`` padded tokens (size × longest item); an item longer than the budget forms a
    batch of its own.
    """
    if batch_size < 1:
        raise ConfigError(f"attribution.batch_size must be at least 1, got {batch_size}")
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        # sorted ascending, so item i is the longest in the batch it would join
        full = len(current) >= batch_size or (
            max_tokens is not None and (len(current) + 1) * lengths[i] > max_tokens)
        if current and full:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _dialogue_attribution(d: Dialogue, ids: list[int], offsets: list[tuple[int, int]],
                          token_rel: np.ndarray, probs: np.ndarray, target: int) -> DialogueAttribution:
    spans = word_spans(d.turns)
    rel, kept, pieces = merge_pieces(offsets, token_rel, spans)
    keep = [i for i, s in enumerate(spans) if kept[i] and s.speaker == "agent"]
    rel = rel[keep]
    scale = np.abs(rel).mean() if len(rel) else 0.0
    rel = rel / scale if scale > 0 else rel
    return DialogueAttribution(
        id=d.id, label=None if d.label is None else CLASS_INDEX[d.label], target=target,
        probs=probs, input_ids=ids, words=[spans[i].word for i in keep],
        spans=[spans[i] for i in keep], relevance=rel, pieces=[pieces[i] for i in keep])


def attribute_dialogues(model: Any, tokenizer: Any, dialogues: Sequence[Dialogue],
                        method: str = "rollout", target: str = "true", batch_size: int = 16,
                        max_length: int = 512, head_tokens: int = 128, progress: bool = True,
                        n_steps: int = 50, max_batch_tokens: int | str | None = "auto",
                        cache: AttributionCache | None = None) -> list[DialogueAttribution]:
    """Word relevance of every dialogue, in input order.

    Batches are formed from dialogues of similar token length so little compute goes to
    padding, capped by ``max_batch_tokens`` (see :func:`batch_token_cap`). With a ``cache``
    (:mod:`.store`), dialogues already attributed by this model with these settings are read
    back, and each new batch is stored as soon as it is done, so an interrupted pass resumes.
    """
    import torch  # torch is heavy and loads on first use

    fn = relevance_fn(method, tokenizer, n_steps)
    enc = encode_texts(tokenizer, [render_turns(d.turns) for d in dialogues], max_length,
                       head_tokens)
    labels = [None if d.label is None else CLASS_INDEX[d.label] for d in dialogues]
    out: list[DialogueAttribution | None] = [None] * len(dialogues)
    store = None
    device = next(model.parameters()).device
    if cache is not None:
        store = _open_store(cache, method, device, {"target": target, "max_length": max_length,
                                                    "head_tokens": head_tokens,
                                                    "n_steps": n_steps})
        out = read_back(store, dialogues, enc.input_ids, labels)
    todo = [i for i, a in enumerate(out) if a is None]
    if store is not None and len(todo) < len(dialogues):
        log.info("attribution (%s): %d of %d dialogues read back from %s", method,
                 len(dialogues) - len(todo), len(dialogues), store.folder)
    batches = length_batches([len(enc.input_ids[i]) for i in todo], batch_size,
                             batch_token_cap(max_batch_tokens, device))
    bar = tqdm(total=len(dialogues), initial=len(dialogues) - len(todo),
               desc=f"attribution ({method})", disable=not progress)
    for b in batches:
        idx = [todo[j] for j in b]
        batch = pad_batch([enc.input_ids[i] for i in idx], tokenizer.pad_token_id)
        res = fn(model, batch["input_ids"].to(device), batch["attention_mask"].to(device),
                 [labels[i] for i in idx], target)
        probs = torch.softmax(res.logits.float(), dim=-1).cpu().numpy()            # [B, C]
        rel = res.relevance.float().cpu().numpy()                                   # [B, T]
        targets = _targets_of(target, [labels[i] for i in idx], probs)
        for j, i in enumerate(idx):
            out[i] = _dialogue_attribution(dialogues[i], enc.input_ids[i], enc.offsets[i],
                                           rel[j], probs[j], targets[j])
        if store is not None:
            store.append([out[i] for i in idx])
        bar.update(len(idx))
    bar.close()
    return [a for a in out if a is not None]


def _open_store(cache: AttributionCache, method: str, device: Any,
                settings: dict[str, Any]) -> Any:
    """The cache's store for this pass: ``n_steps`` counts for integrated gradients only, and
    a pass under autocast (the run's bf16/fp16 precision) is kept apart from fp32 ones."""
    import torch  # torch is heavy and loads on first use

    if method != "integrated_gradients":
        settings = {k: v for k, v in settings.items() if k != "n_steps"}
    amp = (str(torch.get_autocast_dtype(device.type)).removeprefix("torch.")
           if torch.is_autocast_enabled(device.type) else None)
    return cache.store(method, {**settings, **({"autocast": amp} if amp else {})})


def _targets_of(target: str, labels: Sequence[int | None], probs: np.ndarray) -> list[int]:
    if target == "true":   # an unlabelled dialogue is refused by rollout's resolve_targets first
        known = [int(y) for y in labels if y is not None]
        if len(known) < len(labels):
            raise ValueError("target='true' needs labelled dialogues")
        return known
    if target == "predicted":
        return [int(p) for p in probs.argmax(axis=1)]
    return [CLASSES.index(target)] * len(labels)


def is_word(token: str) -> bool:
    """True for a word of the word rule (:data:`benevaudit.text.WORD_RE`), False for a lone
    punctuation mark."""
    return token == MASK_TOKEN or bool(_WORD_START.match(token))


def aggregate_lexicon(attributions: Sequence[DialogueAttribution], top_k: int = 50,
                      min_count: int = 3, words_only: bool = True) -> LexiconResult:
    """Rank lowercase word types per explained class by mean normalised relevance
    (punctuation marks left out with ``words_only``)."""
    sums: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in attributions:
        for w, r in zip(a.words, a.relevance):
            if words_only and not is_word(w):
                continue
            sums[a.target][w.lower()] += float(r)
            counts[a.target][w.lower()] += 1
    ranked: dict[str, list[tuple[str, float]]] = {}
    stats: dict[str, float] = {}
    for c in sorted(sums):
        scored = [(w, s / counts[c][w]) for w, s in sums[c].items() if counts[c][w] >= min_count]
        scored.sort(key=lambda x: (-x[1], x[0]))
        ranked[CLASSES[c]] = scored[:top_k]
        stats[f"n_dialogues_{CLASSES[c]}"] = sum(a.target == c for a in attributions)
        stats[f"n_types_{CLASSES[c]}"] = len(scored)
    labelled = [a for a in attributions if a.label is not None]
    if labelled:
        stats["accuracy"] = float(np.mean([a.pred == a.label for a in labelled]))
    stats["n_dialogues"] = len(attributions)
    stats["n_words"] = int(sum(len(a.words) for a in attributions))
    return LexiconResult(lexicon_from_ranked(ranked), stats)


def compute_lexicon(model: Any, tokenizer: Any, dialogues: Sequence[Dialogue],
                    method: str = "rollout", target: str = "true", top_k: int = 50,
                    min_count: int = 3, batch_size: int = 16, max_length: int = 512,
                    head_tokens: int = 128, progress: bool = True, n_steps: int = 50,
                    max_batch_tokens: int | str | None = "auto",
                    cache: AttributionCache | None = None,
                    words_only: bool = True) -> LexiconResult:
    """The cue lexicon of ``model`` over ``dialogues`` (the study: the test split, target=true).

    ``stats`` holds counts, the model's accuracy on these dialogues and the wall time, under
    plain names; prefix them (``attribution/…``) when logging.
    """
    t0 = time.perf_counter()
    attributions = attribute_dialogues(model, tokenizer, dialogues, method, target, batch_size,
                                       max_length, head_tokens, progress, n_steps, max_batch_tokens,
                                       cache)
    result = aggregate_lexicon(attributions, top_k, min_count, words_only)
    result.stats["seconds"] = time.perf_counter() - t0
    return result
