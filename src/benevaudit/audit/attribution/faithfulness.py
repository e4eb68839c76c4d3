"""Faithfulness of attributions by deletion: does removing the words a method ranks highest
hurt the prediction more than removing as many random words?

For each dialogue, the kept agent words are ranked by a method's relevance for the predicted
class; the top k are deleted and the model re-run. Deletion replaces each deleted word's
WordPiece tokens by a single ``[unused0]`` (the token the cue-masking intervention uses), on the
already-encoded sequence, so truncation never shifts. The drop is p(ŷ | x) − p(ŷ | x without
top-k), with ŷ the prediction on x; both probabilities come from the same batched forward.
The random control deletes the first k words of a per-dialogue permutation drawn from
``numpy.random.default_rng([seed, dialogue index])`` (nested, so its curve is monotone in
expectation). A dialogue with fewer than k agent words loses all of them.

AOPC (area over the perturbation curve) = mean over the k values of the mean drop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from benevaudit.audit.attribution.words import DialogueAttribution, attribute_dialogues
from benevaudit.encoders.encoding import pad_batch
from benevaudit.encoders.models import attention_implementation
from benevaudit.plotting import plt, png
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import MASK_TOKEN

if TYPE_CHECKING:
    from benevaudit.audit.attribution.store import AttributionCache

DEFAULT_KS: tuple[int, ...] = (1, 2, 5, 10, 20)
SHORT_NAMES = {"rollout": "rollout", "rollout_norm": "rollout_norm", "integrated_gradients": "ig",
               "logodds": "logodds", "random": "random"}


@dataclass
class FaithfulnessResult:
    ks: tuple[int, ...]
    curves: dict[str, np.ndarray]  # method -> [len(ks)] mean probability drop
    metrics: dict[str, float]      # faithfulness/aopc_<method>, faithfulness/drop_<method>_k<k>


def delete_words(input_ids: Sequence[int], pieces: Sequence[Sequence[int]], mask_id: int) -> list[int]:
    """``input_ids`` with each word (its token positions) replaced by one ``mask_id``."""
    first = {p[0] for p in pieces if p}
    gone = {q for p in pieces for q in p}
    return [mask_id if i in first else t for i, t in enumerate(input_ids) if i not in gone or i in first]


def random_order(attr: DialogueAttribution, index: int, seed: int) -> np.ndarray:
    return np.random.default_rng([seed, index]).permutation(len(attr.words))


def relevance_order(attr: DialogueAttribution) -> np.ndarray:
    """Most relevant first; ties keep text order."""
    return np.argsort(-attr.relevance, kind="stable")


def predicted_probs(model: Any, sequences: Sequence[Sequence[int]], classes: Sequence[int],
                    pad_id: int, batch_size: int = 32) -> np.ndarray:
    """p(classes[i] | sequences[i]) for every sequence, batched by length. -> [N]."""
    import torch  # torch is heavy and loads on first use

    device = next(model.parameters()).device
    out = np.zeros(len(sequences))
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    model.eval()
    with torch.no_grad(), attention_implementation(model, "sdpa"):
        for lo in range(0, len(order), batch_size):
            idx = order[lo: lo + batch_size]
            batch = pad_batch([sequences[i] for i in idx], pad_id)
            logits = model(input_ids=batch["input_ids"].to(device),
                           attention_mask=batch["attention_mask"].to(device)).logits  # [b, C]
            probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
            out[idx] = probs[np.arange(len(idx)), [classes[i] for i in idx]]
    return out


def deletion_curves(model: Any, orders: Mapping[str, Sequence[np.ndarray]],
                    attributions: Sequence[DialogueAttribution], mask_id: int, pad_id: int,
                    ks: Sequence[int] = DEFAULT_KS, batch_size: int = 32) -> FaithfulnessResult:
    """Mean drop of the predicted class's probability after deleting each ranking's top k.

    ``orders[method][i]`` ranks the word indices of ``attributions[i]``, most important first.
    """
    seqs, classes, slots = [], [], []
    for i, a in enumerate(attributions):
        seqs.append(a.input_ids)
        classes.append(a.pred)
        slots.append(("", i, 0))
        for name, per_dialogue in orders.items():
            for k in ks:
                top = per_dialogue[i][:k]
                seqs.append(delete_words(a.input_ids, [a.pieces[j] for j in top], mask_id))
                classes.append(a.pred)
                slots.append((name, i, k))
    probs = predicted_probs(model, seqs, classes, pad_id, batch_size)
    base = {i: p for (name, i, _), p in zip(slots, probs) if name == ""}
    drops = {name: np.zeros((len(attributions), len(ks))) for name in orders}
    for (name, i, k), p in zip(slots, probs):
        if name:
            drops[name][i, list(ks).index(k)] = base[i] - p
    curves = {name: d.mean(axis=0) if len(d) else np.zeros(len(ks)) for name, d in drops.items()}
    metrics: dict[str, float] = {}
    for name, curve in curves.items():
        short = SHORT_NAMES.get(name, name)
        metrics[f"faithfulness/aopc_{short}"] = float(curve.mean())
        metrics.update({f"faithfulness/drop_{short}_k{k}": float(v) for k, v in zip(ks, curve)})
    return FaithfulnessResult(tuple(ks), curves, metrics)


def evaluate_faithfulness(model: Any, tokenizer: Any, dialogues: Sequence[Dialogue],
                          methods: Sequence[str] = ("rollout", "integrated_gradients"),
                          logodds: Mapping[str, Mapping[str, float]] | None = None,
                          ks: Sequence[int] = DEFAULT_KS, seed: int = 0, batch_size: int = 16,
                          max_length: int = 512, head_tokens: int = 128, n_steps: int = 50,
                          progress: bool = True,
                          max_batch_tokens: int | str | None = "auto",
                          cache: AttributionCache | None = None) -> FaithfulnessResult:
    """Deletion curves for attribution ``methods``, the log-odds lexicon (``logodds``: class ->
    word -> z from :func:`~benevaudit.audit.attribution.logodds.logodds_scores`, words ranked
    by the z of the predicted class; unseen words last) and the random control."""
    if not methods:
        raise ValueError("evaluate_faithfulness needs at least one attribution method")
    per_method = {m: attribute_dialogues(model, tokenizer, dialogues, m, "predicted", batch_size,
                                         max_length, head_tokens, progress, n_steps,
                                         max_batch_tokens, cache)
                  for m in methods}
    reference = per_method[methods[0]]
    orders: dict[str, list[np.ndarray]] = {
        m: [relevance_order(a) for a in attrs] for m, attrs in per_method.items()}
    if logodds is not None:
        orders["logodds"] = [relevance_order(_rescored(a, logodds)) for a in reference]
    orders["random"] = [random_order(a, i, seed) for i, a in enumerate(reference)]
    mask_id = tokenizer.convert_tokens_to_ids(MASK_TOKEN)
    result = deletion_curves(model, orders, reference, mask_id, tokenizer.pad_token_id, ks,
                             batch_size * 2)
    return result


def _rescored(a: DialogueAttribution, scores: Mapping[str, Mapping[str, float]]) -> DialogueAttribution:
    table = scores[CLASSES[a.pred]]
    rel = np.array([table.get(w.lower(), -np.inf) for w in a.words])
    return replace(a, relevance=rel)


def plot_curves(result: FaithfulnessResult, run: str,
                label: Callable[[str], str] = lambda m: m) -> bytes:
    """Probability drop against the number of deleted words, one line per method; the title
    names the run."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, curve in result.curves.items():
        style = "--" if name == "random" else "-"
        ax.plot(result.ks, curve, style, marker="o",
                label=f"{label(name)} (AOPC {curve.mean():.3f})")
    ax.set_xlabel("words deleted (k)")
    ax.set_ylabel("drop in p(predicted class)")
    ax.set_title(f"Deletion faithfulness\nrun {run}")
    ax.legend(fontsize=8)
    return png(fig, dpi=120)   # titles fitted, closed
