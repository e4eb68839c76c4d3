"""Loading a causal LM from transformers, and reading what it generated: the reply cut at
end-of-turn or a stop string. Shared by the text backend (:mod:`benevaudit.llm.hf`) and the
speech backend (:mod:`benevaudit.llm.hf_speech`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benevaudit.llm.gguf import resolve_model


def load_hf(model: str, dtype: str, device: str, cache_dir: str | None) -> tuple[Any, Any, str]:
    """Tokenizer, model and resolved path, or an error saying how to point at a local copy."""
    # transformers is heavy and loads on first use
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model(model, cache_dir)
    if path.startswith(("/", "./", "../", "~")) and not Path(path).expanduser().is_dir():
        raise RuntimeError(f"no model directory at {path!r} (llm.model); expected a directory "
                           "with config.json, weights and tokenizer files")
    path = str(Path(path).expanduser()) if path.startswith("~") else path
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        torch_dtype = getattr(torch, dtype) if dtype != "auto" else (
            torch.bfloat16 if device.startswith("cuda") else torch.float32)
        net = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype).to(device).eval()
    except OSError as err:
        offline = os.environ.get("HF_HUB_OFFLINE") == "1"
        raise RuntimeError(
            f"cannot load LLM {model!r} ({type(err).__name__}: {str(err).splitlines()[0]}). "
            + ("HF_HUB_OFFLINE=1, so a hub id must already be in the Hugging Face cache. "
               if offline else "")
            + f"Point at a local directory instead (llm.model=/path/to/{Path(path).name} with "
            "config.json, weights and tokenizer files), or use llm.model=embedded:smollm2."
        ) from None
    return tokenizer, net, path


def cut_reply(tokenizer: Any, eos_ids: Sequence[int], row: list[int],
              stops: Sequence[str]) -> tuple[str, str, int]:
    """(text, finish reason, generated tokens) of a row cut at end-of-turn or a stop string;
    shared with the speech backend."""
    finish, n = "length", len(row)
    for k, tok in enumerate(row):
        if tok in eos_ids:
            finish, n = "stop", k + 1
            break
    text = tokenizer.decode([t for t in row[:n] if t not in eos_ids], skip_special_tokens=True)
    for stop in stops:
        if stop and stop in text:
            text, finish = text.split(stop)[0], "stop"
    return text, finish, n


def eos_ids(tokenizer: Any, model: Any) -> list[int]:
    """Every token that ends an assistant turn (the generation config may list several)."""
    ids = model.generation_config.eos_token_id
    ids = list(ids) if isinstance(ids, (list, tuple)) else ([ids] if ids is not None else [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    if not ids:
        raise ValueError("the model has no end-of-sequence token; cannot tell where a reply ends")
    return ids
