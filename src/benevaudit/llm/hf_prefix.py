"""Prompt-prefix reuse for the transformers backend: KV-cache helpers and the cost rule.

``score`` also keeps the keys and values of the last prompt it ran: the next prompt computes
only the tokens after their longest common prefix. A detector reading an agent turn with its
whole prior context sends one prompt per turn, each extending the previous one, so a dialogue
of n turns costs about one prompt's prefill instead of n. Greedy ``chat`` (a guard writing its
verdict over context units) prefills its prompts one at a time from the previous prompt's cache,
all but each prompt's last token, then decodes them together: the prompts' caches, left-padded
into one batch cache (``padded_cache``), continue as a padded batch would, so reuse costs no
batching and is taken whenever a prefix repeats. Where a cache cannot be padded so
(sliding-window layers, releases before ``DynamicCache`` had layers), the prompts decode one at a
time, and reuse is taken only when the repeated prompt tokens outnumber ``DECODE_STEP_TOKENS``
times the extra decoding steps, counted from the replies seen so far (``max_tokens`` before the
first). ``prefill_tokens`` (computed) and ``prompt_tokens`` (what a prompt-by-prompt run
computes) count the saving.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# about how many prompt tokens one decoding step costs on transformers' eager loop (SmolLM2 on
# 2 CPU cores: 46 ms a step, 1.2 ms a prefill token); larger models make steps relatively cheaper
DECODE_STEP_TOKENS = 32


def common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    """Length of the longest common prefix of ``a`` and ``b``, at most ``limit``."""
    n, limit = 0, min(len(a), len(b), limit)
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def reuse_pays(previous: Sequence[int], prompts: Sequence[Sequence[int]], max_tokens: int,
               reply_tokens: float | None, batch_size: int,
               decode_step_tokens: int = DECODE_STEP_TOKENS) -> bool:
    """Whether one-at-a-time greedy decoding from the cached ``previous`` prompt saves more
    prefill (prompt tokens repeating the prompt before them, the first against ``previous``)
    than it loses by not batching (``decode_step_tokens`` per extra decoding step, a reply
    counted as ``reply_tokens`` long, ``max_tokens`` before any reply was seen)."""
    shared = 0
    for p in prompts:
        shared += common_prefix(previous, p, len(p) - 1)
        previous = p
    reply = min(max_tokens, reply_tokens if reply_tokens is not None else max_tokens)
    batches = -(-len(prompts) // batch_size)
    return shared > decode_step_tokens * (len(prompts) - batches) * reply


def empty_cache(config: Any) -> Any:
    """A fresh KV cache for ``generate`` to fill in place."""
    from transformers import DynamicCache  # transformers is heavy and loads on first use

    try:
        return DynamicCache(config=config)
    except TypeError:  # older releases take no config
        return DynamicCache()


def crop_to(cache: Any, length: int) -> Any:
    """Cut a KV cache back to its first ``length`` positions (a negative ``crop`` argument
    removes that many tokens in every transformers release that has ``crop``)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)
    return cache


def layer_states(cache: Any) -> list[tuple[Any, Any]] | None:
    """Each layer's (keys, values) ``[1, H, T, D]``, or None where the cache cannot be padded
    into a batch (a sliding-window layer keeps a window, not every position)."""
    layers = getattr(cache, "layers", None)
    if layers is None or any(getattr(x, "is_sliding", False) or not hasattr(x, "keys")
                             for x in layers):
        return None
    return [(x.keys, x.values) for x in layers]


def padded_cache(config: Any, rows: Sequence[list[tuple[Any, Any]]]) -> Any:
    """One batch KV cache from single-row ones, each left-padded (zeros) to the longest, as a
    left-padded batch's prefill would have laid them out; the attention mask hides the pads."""
    width = max(keys.shape[-2] for keys, _ in (row[0] for row in rows))
    cache = empty_cache(config)
    for layer in range(len(rows[0])):
        k0, v0 = rows[0][layer]
        keys = k0.new_zeros((len(rows), k0.shape[1], width, k0.shape[3]))    # [B, H, W, D]
        values = v0.new_zeros((len(rows), v0.shape[1], width, v0.shape[3]))
        for i, row in enumerate(rows):
            k, v = row[layer]
            n = k.shape[-2]
            if n:
                keys[i, :, width - n:], values[i, :, width - n:] = k[0], v[0]
        cache.update(keys, values, layer)
    return cache


def left_pad(prompts: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    """Token ids and attention mask ``[B, T]``, padded on the left so that every row's next
    token is the last column: the layout ``padded_cache`` gives the prompts' caches."""
    import torch  # heavy; loads on first use

    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, p in enumerate(prompts):
        ids[row, width - len(p):] = torch.tensor(p)
        mask[row, width - len(p):] = 1
    return ids, mask
