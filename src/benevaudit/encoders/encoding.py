"""Tokenising rendered dialogues for the classifier, with head-and-tail truncation.

Dialogues longer than ``max_length`` tokens (special tokens included) keep their first
``head_tokens`` and their last ``max_length - 2 - head_tokens`` tokens (Sun et al., 2019: the
head+tail split beat head-only and tail-only truncation for long texts). Offsets into the
rendered text are kept so relevance can be mapped back to words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class Encoded:
    input_ids: list[list[int]]           # per dialogue, [CLS] … [SEP], unpadded
    offsets: list[list[tuple[int, int]]]  # char span in the rendered text; (0, 0) for specials


def head_tail(n: int, budget: int, head_tokens: int) -> tuple[slice, slice]:
    """Slices of ``range(n)`` to keep so at most ``budget`` tokens remain."""
    if n <= budget:
        return slice(0, n), slice(n, n)
    head = min(head_tokens, budget)
    return slice(0, head), slice(n - (budget - head), n)


def encode_texts(tokenizer: Any, texts: Sequence[str], max_length: int = 512,
                 head_tokens: int = 128) -> Encoded:
    if max_length < 3:
        raise ValueError(f"max_length must be at least 3, got {max_length}")
    enc = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True,
                    return_attention_mask=False, return_token_type_ids=False,
                    verbose=False)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    ids_out, off_out = [], []
    for ids, offs in zip(enc["input_ids"], enc["offset_mapping"]):
        h, t = head_tail(len(ids), max_length - 2, head_tokens)
        ids_out.append([cls, *ids[h], *ids[t], sep])
        off_out.append([(0, 0), *map(tuple, offs[h]), *map(tuple, offs[t]), (0, 0)])
    return Encoded(ids_out, off_out)


def pad_batch(input_ids: Sequence[Sequence[int]], pad_id: int = 0) -> dict[str, Any]:
    """Dynamic padding: pad to the longest sequence of the batch, not to 512."""
    import torch  # torch is heavy and loads on first use

    width = max(len(x) for x in input_ids)
    ids = torch.full((len(input_ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(input_ids), width), dtype=torch.long)
    for i, x in enumerate(input_ids):
        ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, : len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask}
