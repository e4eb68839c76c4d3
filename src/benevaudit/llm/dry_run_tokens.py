"""Tokenizers for a dry run: found offline or not at all, never a model's weights.

``dry_run.tokenizer`` picks them:
- ``auto`` (the default): each model's own tokenizer where it is at hand offline (the embedded
  LLM, a local directory, a hub id already in the cache); the others are left uncounted;
- ``embedded``: the embedded LLM's tokenizer (SmolLM2) for models without their own at hand,
  an estimate, labelled as such;
- a directory: that tokenizer for every model;
- ``none``: no counts.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, NamedTuple

from benevaudit.errors import ConfigError
from benevaudit.llm.gguf import DIR_NAME, cache_root, smollm2_gguf_path
from benevaudit.llm.prompting import chat_messages

CHOICES = ("auto", "embedded", "none")


class Rendered(NamedTuple):
    prompt: str | None        # exact text, where it is known
    ids: list[int] | None     # token ids of the prompt (or of its estimate)
    why: str | None           # why ids are missing
    estimate: bool            # counted with another model's tokenizer


class Found(NamedTuple):
    tokenizer: Any
    estimate: bool
    why: str | None


@functools.lru_cache(maxsize=1)
def embedded_tokenizer() -> Any:
    """SmolLM2's tokenizer: from the converted directory when it exists, else from the GGUF
    file (its metadata; the weights are not read into a model)."""
    from transformers import AutoTokenizer  # transformers is heavy and loads on first use

    converted = cache_root() / "models" / DIR_NAME
    if (converted / "tokenizer_config.json").is_file():
        return AutoTokenizer.from_pretrained(str(converted))
    gguf = smollm2_gguf_path()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


@functools.lru_cache(maxsize=16)
def offline_tokenizer(source: str) -> Any:
    """A tokenizer from a directory or the local hub cache; OSError/ValueError when absent."""
    from transformers import AutoTokenizer  # transformers is heavy and loads on first use

    return AutoTokenizer.from_pretrained(source, local_files_only=True)


def render_template(template: str, messages: list[dict[str, Any]]) -> str | None:
    """An explicit template (a guard's role-only one, which writes its BOS token out) rendered
    without a tokenizer, or None when the template reads ``bos_token``, unknown here."""
    # transformers is heavy and loads on first use
    from transformers.utils.chat_template_utils import render_jinja_template

    if "bos_token" in template:
        return None
    texts, _ = render_jinja_template([messages], chat_template=template,
                                     add_generation_prompt=True)
    return texts[0]


class Tokenizers:
    """Tokenizer lookup per model, as ``dry_run.tokenizer`` says (see the module docstring)."""

    def __init__(self, choice: str | None) -> None:
        self.choice = "auto" if choice in (None, "", "auto") else str(choice)
        self.supplied = None
        if self.choice not in CHOICES:
            path = Path(self.choice).expanduser()
            if not path.is_dir():
                raise ConfigError(f"dry_run.tokenizer={self.choice}: no such directory; expected "
                                  f"a tokenizer directory or one of {list(CHOICES)}")
            try:
                self.supplied = offline_tokenizer(str(path))
            except (OSError, ValueError) as err:
                raise ConfigError(f"dry_run.tokenizer={self.choice}: cannot load a tokenizer "
                                  f"there ({str(err).splitlines()[0]})") from None
        self._found: dict[str, Found] = {}

    def find(self, model_id: str) -> Found:
        if model_id not in self._found:
            self._found[model_id] = self._lookup(model_id)
        return self._found[model_id]

    def _lookup(self, model_id: str) -> Found:
        if self.supplied is not None:
            return Found(self.supplied, False, None)
        if self.choice == "none":
            return Found(None, False, "dry_run.tokenizer=none")
        if model_id == "embedded:smollm2":
            return Found(embedded_tokenizer(), False, None)
        own = None
        if not model_id.startswith("embedded:") and model_id not in ("dry_run", "scripted"):
            try:
                own = offline_tokenizer(str(Path(model_id).expanduser())
                                        if Path(model_id).expanduser().is_dir() else model_id)
            except (OSError, ValueError):
                own = None
        if own is not None:
            return Found(own, False, None)
        if self.choice == "embedded":
            return Found(embedded_tokenizer(), True, None)
        return Found(None, False, "its tokenizer is not available offline")

    def render(self, model_id: str, template: str | None,
               messages: list[dict[str, Any]]) -> Rendered:
        """The prompt the model would read, exact where it can be, and its token ids."""
        if any(not isinstance(m["content"], str) for m in messages):
            return Rendered(None, None, "audio input has no text prompt to count", False)
        tok, estimate, why = self.find(model_id)
        prompt = None
        if tok is not None and not template:  # a template without a system role: folded
            messages = chat_messages(tok, messages)
        if tok is not None and not estimate:
            try:
                prompt = tok.apply_chat_template(messages, chat_template=template,
                                                 tokenize=False, add_generation_prompt=True)
            except ValueError as err:   # a tokenizer with no chat template
                return Rendered(None, None, str(err).splitlines()[0], False)
        elif template:
            prompt = render_template(template, messages)
        if tok is None:
            return Rendered(prompt, None, why, False)
        text = prompt if prompt is not None and not estimate else tok.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=True)
        return Rendered(prompt, list(tok(text, add_special_tokens=False)["input_ids"]), None,
                        estimate)

    def encode(self, model_id: str, text: str, max_length: int | None
               ) -> tuple[list[int] | None, str | None, bool]:
        """A classifier's input ids (special tokens added, truncated as the classifier does)."""
        tok, estimate, why = self.find(model_id)
        if tok is None:
            return None, why, False
        ids = list(tok(text, add_special_tokens=True)["input_ids"])
        return (ids[:max_length] if max_length else ids), None, estimate

