"""Sampling each row of a batch from its own seeded generator (the hf backend).

transformers' ``generate`` draws a whole batch from one global RNG, so a sampled reply depends
on which requests shared its batch. ``RowSampler`` is a logits processor that does the sampling
itself, row by row: temperature, then top-p, then one uniform draw from the row's own
``torch.Generator`` (seeded with the request's seed) mapped through the cumulative
distribution. It leaves a single finite logit per row, so ``generate`` runs greedy and simply
takes the drawn token. A request then gets the same reply alone or in any batch, up to the
floating-point noise that padding adds to its logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


class RowSampler:
    """Temperature and top-p sampling with one generator per batch row.

    Args:
        seeds: one seed per row, in batch order (``base.request_seed``).
        temperature: > 0.
        top_p: the nucleus mass kept, in (0, 1].
    """

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float,
                 device: str | torch.device = "cpu") -> None:
        if temperature <= 0:
            raise ValueError(f"RowSampler needs temperature > 0, got {temperature}")
        self.temperature, self.top_p = temperature, top_p
        self.generators = []
        for seed in seeds:
            g = torch.Generator(device=device)
            g.manual_seed(int(seed))
            self.generators.append(g)

    def __call__(self, input_ids: Any, scores: torch.Tensor) -> torch.Tensor:
        """``scores [B, V]`` -> logits that are 0 at each row's drawn token, -inf elsewhere."""
        if scores.shape[0] != len(self.generators):
            raise ValueError(f"RowSampler has {len(self.generators)} generators for a batch of "
                             f"{scores.shape[0]} rows")
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)       # [B, V]
        sorted_p, order = torch.sort(probs, dim=-1, descending=True)          # [B, V]
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p                    # mass ahead
        sorted_p = sorted_p.masked_fill(before >= self.top_p, 0.0)            # nucleus; top-1 kept
        cdf = torch.cumsum(sorted_p, dim=-1)                                  # [B, V]
        out = torch.full_like(scores, -float("inf"))
        for row, g in enumerate(self.generators):
            u = torch.rand((), generator=g, device=g.device) * cdf[row, -1]
            k = int(torch.searchsorted(cdf[row], u.reshape(1), right=True).clamp(
                max=cdf.shape[-1] - 1))
            out[row, order[row, k]] = 0.0
        return out
