"""Gradient-weighted multi-layer attention rollout (Chefer, Gur & Wolf, 2021, "Generic
attention-model explainability"), batched over padded dialogues on stock transformers models.

For a pure self-attention encoder the method keeps a relevance map R (T×T), starting from the
identity, and updates it layer by layer, first layer first:

    Ā_l = mean_h (∇A_l ⊙ A_l)⁺          gradient-weighted attention, negatives clamped
    R   ← R + Ā_l · R                   i.e. R = (I + Ā_L) ⋯ (I + Ā_1)

The identity is the residual connection; the method does not row-normalise R for
self-attention (its row normalisation belongs to the bi-modal co-attention rules). Token
relevance is the [CLS] row of R. The row-normalised variant of attention rollout (Abnar &
Zuidema, 2020; Chefer et al.'s earlier LRP-based rollout) is available as ``rollout_norm``:
each factor I + Ā_l is divided by its row sums, so R is row-stochastic and each dialogue's
token relevance sums to one. Only that row is needed, so it is rolled out as a row vector
from the last layer down (r ← r + r·Ā_l): O(L·T²) per example instead of O(L·T³).

Padding does not leak: padded keys get exactly zero attention, so Ā_l[i, pad] = 0 for every
query i, and the [CLS] row never reaches a padded column. Padded positions are zeroed anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import torch


class Relevance(NamedTuple):
    """Token relevance for a batch, with the logits of the same forward pass."""

    relevance: torch.Tensor  # [B, T], zero on padding
    logits: torch.Tensor     # [B, C]


def weighted_attention(attn: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """Ā = mean over heads of (∇A ⊙ A)⁺.  attn, grad: [B, H, T, T] -> [B, T, T]."""
    return (grad * attn).clamp(min=0).mean(dim=1)


def rollout_cls_row(attentions: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                    attention_mask: torch.Tensor) -> torch.Tensor:
    """[CLS] row of R = (I + Ā_L)⋯(I + Ā_1), for layers given first to last.

    attentions, grads: L tensors [B, H, T, T]; attention_mask: [B, T] (1 = real token).
    Returns [B, T] relevance with padded positions set to zero.
    """
    return rollout_cls_row_reduced([weighted_attention(a, g) for a, g in zip(attentions, grads)],
                                   attention_mask)


def rollout_cls_row_reduced(a_bars: Sequence[torch.Tensor], attention_mask: torch.Tensor,
                            normalise: bool = False) -> torch.Tensor:
    """[CLS] row of R = (I + Ā_L)⋯(I + Ā_1) from the head-averaged maps Ā_l, first layer first.

    With ``normalise``, each factor is row-normalised: (I + Ā_l) / (1 + Ā_l·1).
    a_bars: L tensors [B, T, T]; attention_mask: [B, T]. Returns [B, T], zero on padding.
    """
    import torch  # torch is heavy and loads on first use

    batch, width = attention_mask.shape
    row = torch.zeros(batch, width, dtype=a_bars[0].dtype, device=a_bars[0].device)
    row[:, 0] = 1.0                                                      # e_CLS: [B, T]
    for a_bar in reversed(a_bars):
        if normalise:  # r·D⁻¹(I + Ā) with D the row sums of I + Ā
            row = row / (1.0 + a_bar.sum(dim=-1))                       # [B, T]
        row = row + torch.bmm(row.unsqueeze(1), a_bar).squeeze(1)       # [B, T]
    return row * attention_mask.to(row.dtype)


def rollout_full(attentions: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                 normalise: bool = False) -> torch.Tensor:
    """The whole relevance map R = (I + Ā_L)⋯(I + Ā_1), [B, T, T]: for inspection and tests."""
    import torch  # torch is heavy and loads on first use

    batch, _, width, _ = attentions[0].shape
    eye = torch.eye(width, dtype=attentions[0].dtype, device=attentions[0].device)
    rel = eye.expand(batch, width, width).clone()                       # [B, T, T]
    for attn, grad in zip(attentions, grads):
        factor = eye + weighted_attention(attn, grad)                   # [B, T, T]
        if normalise:
            factor = factor / factor.sum(dim=-1, keepdim=True)
        rel = torch.bmm(factor, rel)
    return rel


def resolve_targets(target: str, labels: Sequence[int | None], logits: torch.Tensor,
                    class_names: Sequence[str]) -> torch.Tensor:
    """Class index explained for each example: ``true``, ``predicted`` or a class name.

    logits: [B, C] -> [B] long.
    """
    import torch  # torch is heavy and loads on first use

    if target == "predicted":
        return logits.argmax(dim=-1)
    if target == "true":
        if any(y is None for y in labels):
            raise ValueError("target='true' needs labelled dialogues; some have label=None "
                             "(use target='predicted' for unlabelled data)")
        return torch.tensor(list(labels), dtype=torch.long, device=logits.device)
    if target in class_names:
        return torch.full((logits.shape[0],), list(class_names).index(target),
                          dtype=torch.long, device=logits.device)
    raise ValueError(f"unknown attribution target {target!r}; expected one of "
                     f"{['true', 'predicted', *class_names]}")


def class_names(model: Any) -> list[str]:
    """Class names in logit order, from the model's config."""
    return [model.config.id2label[i] for i in range(model.config.num_labels)]


def batch_relevance(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    labels: Sequence[int | None], target: str = "true",
                    normalise: bool = False) -> Relevance:
    """One forward and one backward for the whole batch.

    The model must use eager attention (``load_classifier(..., attn_implementation="eager")``)
    so it returns attention weights. The embeddings are fed as a leaf that requires grad, so
    the attention maps are differentiable even when the model's weights are frozen; gradients
    never accumulate in the weights. Each layer's gradient is reduced to Ā_l by a hook the
    moment backward produces it, so the L full [B, H, T, T] gradients are never held at once:
    the extra memory over a plain backward is L maps of [B, T, T]. ``normalise`` selects the
    row-normalised variant (method ``rollout_norm``).
    input_ids, attention_mask: [B, T].
    """
    import torch  # torch is heavy and loads on first use

    if model.config._attn_implementation != "eager":
        raise ValueError("attention rollout needs eager attention; load the model with "
                         "load_classifier(source, attn_implementation='eager') "
                         f"(got {model.config._attn_implementation!r})")
    model.eval()
    a_bars, logits = weighted_attentions(model, input_ids, attention_mask, labels, target)
    # the product over layers stays in fp32 under autocast too: bf16/fp16 loses the small terms
    with torch.no_grad(), torch.autocast(input_ids.device.type, enabled=False):
        rel = rollout_cls_row_reduced([a.float() for a in a_bars], attention_mask, normalise)  # [B, T]
    return Relevance(rel, logits.detach())


def weighted_attentions(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                        labels: Sequence[int | None], target: str,
                        ) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Ā_l [B, T, T] of every layer (attention weighted by its gradient towards the target
    logit), from one forward and one backward, and the logits [B, C]."""
    import torch  # torch is heavy and loads on first use

    with torch.enable_grad():
        embeds = model.get_input_embeddings()(input_ids).detach().requires_grad_(True)  # [B, T, D]
        out = model(inputs_embeds=embeds, attention_mask=attention_mask, output_attentions=True)
        logits = out.logits                                                             # [B, C]
        targets = resolve_targets(target, labels, logits, class_names(model))
        # one-hot target per example: the examples do not interact, so the gradient of the
        # sum is each example's own gradient
        score = logits.gather(1, targets.unsqueeze(1)).sum()
        attentions = out.attentions                                                     # L×[B,H,T,T]
        del out
        a_bars: list[torch.Tensor | None] = [None] * len(attentions)

        def keep(layer: int, values: torch.Tensor) -> Any:
            # ``values`` is a detached alias: a hook that held the hooked tensor itself would
            # form a reference cycle and keep the batch's whole graph alive until gc runs
            def hook(grad: torch.Tensor) -> None:
                a_bars[layer] = weighted_attention(values, grad)                        # [B, T, T]
            return hook

        handles = [attn.register_hook(keep(layer, attn.detach()))
                   for layer, attn in enumerate(attentions)]
        # asking for the first layer's map runs backward through every layer above it, and
        # each layer's hook fires on the way down
        torch.autograd.grad(score, attentions[0])
        for handle in handles:
            handle.remove()
    del attentions
    if any(a is None for a in a_bars):
        raise RuntimeError("attention rollout: some layer's attention received no gradient")
    return a_bars, logits.detach()
