"""[CLS] embeddings of rendered dialogues from a BERT-style encoder (the Vendi score's items).

``vendi.embedder`` picks the encoder: the packaged MiniLM, a randomly initialised tiny BERT, the
study's ``bert-base-uncased`` (from the Hugging Face cache or hub), or a local model directory.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from benevaudit.encoders.encoding import encode_texts, pad_batch
from benevaudit.encoders.models import TINY_BERT, load_tokenizer, packaged_minilm_path
from benevaudit.errors import ConfigError

STUDY_EMBEDDER = "bert-base-uncased"
EMBEDDERS = ("minilm", "tiny", "none", STUDY_EMBEDDER)
"""``vendi.embedder`` values; any other value is read as a local model directory.
``bert-base-uncased`` (the study's encoder) is read from the Hugging Face cache or hub."""


def cls_embeddings(texts: Sequence[str], embedder: str = "minilm", batch_size: int = 32,
                   max_length: int = 512, device: str = "cpu", seed: int = 0,
                   progress: bool = False) -> np.ndarray:
    """[CLS] vectors [n, hidden] of rendered dialogues from a BERT-style encoder, without grad.

    Long dialogues keep head and tail tokens (as for the classifier). Texts are batched in
    length order so a batch pads to similar lengths, then returned in input order.
    """
    # torch, transformers are heavy and load on first use
    import torch
    from transformers import AutoModel, BertConfig

    if embedder == "tiny":
        torch.manual_seed(seed)
        model = AutoModel.from_config(BertConfig(vocab_size=30522, **TINY_BERT),
                                      add_pooling_layer=False)
    else:
        path = str(packaged_minilm_path()) if embedder == "minilm" else embedder
        try:
            model = AutoModel.from_pretrained(path, trust_remote_code=False)
        except OSError as e:
            raise ConfigError(f"vendi.embedder={embedder}: cannot load it ({type(e).__name__}); "
                              "a hub id must be in the Hugging Face cache when offline, or give "
                              "a local model directory") from None
    tokenizer = load_tokenizer("packaged:minilm" if embedder in ("minilm", "tiny") else embedder)
    model.eval().to(device)
    ids = encode_texts(tokenizer, texts, max_length=max_length).input_ids
    order = np.argsort([len(x) for x in ids], kind="stable")
    out = np.empty((len(ids), model.config.hidden_size), dtype=np.float32)
    batches = range(0, len(ids), batch_size)
    with torch.inference_mode():
        for start in tqdm(batches, desc="embed", disable=not progress, leave=False):
            idx = order[start:start + batch_size]
            batch = {k: v.to(device) for k, v in pad_batch([ids[i] for i in idx]).items()}
            hidden = model(**batch).last_hidden_state     # [B, T, H]
            out[idx] = hidden[:, 0].float().cpu().numpy()  # [B, H]: the [CLS] position
    return out
