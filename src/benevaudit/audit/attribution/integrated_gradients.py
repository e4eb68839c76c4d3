"""Integrated gradients on the embedding layer: a second opinion on attention rollout.

Captum's ``LayerIntegratedGradients`` integrates the gradient of the target logit along the
straight path from a baseline to the input in the output space of the model's embeddings
module (word + position + segment embeddings, after LayerNorm). The baseline is the same
sequence with every real token replaced by ``[PAD]`` except ``[CLS]`` and ``[SEP]``, so the
baseline differs from the input only in its content words and positions stay aligned.
Token relevance is the attribution summed over the hidden dimension; it is signed (negative =
evidence against the target class). Cost: ``n_steps`` forward and backward passes per example,
against one for rollout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benevaudit.audit.attribution.rollout import Relevance, class_names, resolve_targets
from benevaudit.encoders.models import attention_implementation

if TYPE_CHECKING:
    import torch

DEFAULT_STEPS = 50


def pad_baseline(input_ids: torch.Tensor, pad_id: int, keep_ids: Sequence[int]) -> torch.Tensor:
    """[PAD] everywhere except the tokens in ``keep_ids`` ([CLS], [SEP]). [B, T] -> [B, T]."""
    import torch  # torch is heavy and loads on first use

    keep = torch.isin(input_ids, torch.tensor(list(keep_ids), device=input_ids.device))
    return torch.where(keep, input_ids, torch.full_like(input_ids, pad_id))


def batch_relevance(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    labels: Sequence[int | None], target: str = "true", *,
                    pad_id: int, keep_ids: Sequence[int], n_steps: int = DEFAULT_STEPS,
                    internal_batch_size: int = 64) -> Relevance:
    """Signed token relevance [B, T] (zero on padding) and the logits [B, C] of the input.

    ``keep_ids`` are the tokenizer's [CLS] and [SEP] ids (kept in the baseline).
    ``internal_batch_size`` bounds how many interpolated sequences go through the model at
    once (the whole batch holds B × n_steps of them).
    """
    model.eval()
    with attention_implementation(model, "sdpa"):  # no attention weights needed here
        return _relevance(model, input_ids, attention_mask, labels, target, pad_id, keep_ids,
                          n_steps, internal_batch_size)


def _relevance(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               labels: Sequence[int | None], target: str, pad_id: int, keep_ids: Sequence[int],
               n_steps: int, internal_batch_size: int) -> Relevance:
    # torch, captum are heavy and load on first use
    import torch
    from captum.attr import LayerIntegratedGradients

    def forward(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, attention_mask=mask).logits             # [b, C]

    with torch.no_grad():
        logits = forward(input_ids, attention_mask)                          # [B, C]
    targets = resolve_targets(target, labels, logits, class_names(model))
    lig = LayerIntegratedGradients(forward, model.base_model.embeddings)
    baseline = pad_baseline(input_ids, pad_id, keep_ids)
    attr = lig.attribute(input_ids, baselines=baseline, target=targets,
                         additional_forward_args=(attention_mask,), n_steps=n_steps,
                         internal_batch_size=max(internal_batch_size, input_ids.shape[0]))
    rel = attr.sum(dim=-1).detach() * attention_mask.to(attr.dtype)      # [B, T]
    return Relevance(rel, logits)
