"""What every ``llm`` block has, whatever its backend: the keys all backends share and the
checks made of a block before its model loads.

Each backend's block (:mod:`benevaudit.llm.backend_specs`) extends :class:`LLMBlock` with the
keys its constructor takes; ``LLMSpec`` (their union, told apart by ``backend``) is the type a
config field holds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Optional

from benevaudit.errors import ConfigError
from benevaudit.files import check_llm_files
from benevaudit.llm.cache_files import check_sqlite
from benevaudit.llm.registry import BACKENDS
from benevaudit.llm.system_prompt import SystemPrompt
from benevaudit.specs import Spec

# read where the model is built, never passed to a constructor
BUILD_KEYS = frozenset({"backend", "cache", "audio_in"})


class LLMBlock(Spec):
    """The keys of every backend: which backend serves the block, the model, the request
    cache, and whether the model hears (``audio_in``) and speaks (``audio_out``)."""

    backend: Optional[str] = None
    model: Optional[str] = None
    cache: Optional[str] = None           # the block's own request cache (null: none)
    # hears ``input_audio`` parts (probe.mode=audio needs it; on hf it loads a speech model)
    audio_in: Optional[bool] = None
    # answers in speech too (hf: Qwen2.5-Omni's talker; openai: modalities with audio)
    audio_out: Optional[bool] = None

    # keys the backend's constructor does not take although the block may set them
    not_passed: ClassVar[frozenset[str]] = frozenset()

    def template(self) -> str | None:
        """Its chat template (a file or inline Jinja); None where the backend takes none."""
        return None

    def system(self) -> SystemPrompt | None:
        """The model card's system prompt that frames each conversation; None where the
        backend takes none or the block sets none."""
        return None

    def check_files(self, key: str) -> None:
        """Its chat template file and a local model directory, read now (``key``: where the
        block sits, ``target.llm``)."""
        check_llm_files(self.template(), self.model, key)

    def check_loadable(self, key: str) -> None:
        """Everything about the model it names that holds before loading: a known backend, a
        local directory or cached hub id, the template file, the request cache."""
        if self.backend not in BACKENDS:
            raise ConfigError(f"{key}.backend={self.backend!r}: expected one of "
                              f"{sorted(BACKENDS)}")
        model = self.model or ""
        local = model.startswith(("/", "./", "../", "~"))
        if local and not Path(model).expanduser().is_dir():
            raise ConfigError(f"{key}.model={model}: no such directory (expected a model "
                              "directory with config.json, weights and tokenizer files)")
        if (self.backend == "hf" and not local and "/" in model
                and os.environ.get("HF_HUB_OFFLINE") == "1"):
            from huggingface_hub import try_to_load_from_cache   # transformers' hub client, heavy

            if not isinstance(try_to_load_from_cache(model, "config.json"), str):
                raise ConfigError(f"{key}.model={model}: not in the Hugging Face cache, and "
                                  "HF_HUB_OFFLINE=1 (expected a cached hub id, a local "
                                  "directory, or embedded:smollm2)")
        template = self.template()
        if template and "{" not in template and not Path(template).is_file():
            raise ConfigError(f"{key}.chat_template={template}: no such template file "
                              "(expected a .jinja file or an inline Jinja string)")
        self.check_files(key)
        if self.cache:
            check_sqlite(self.cache, f"{key}.cache")

    def runs_weights_of(self, checkpoint: str | None) -> bool:
        """Whether the block runs ``checkpoint``'s own weights: its hub id, or a local copy in
        a directory of the same name (``/models/Llama-Guard-3-8B`` for
        ``meta-llama/Llama-Guard-3-8B``)."""
        if not self.model or not checkpoint:
            return False
        return (self.model.rstrip("/").split("/")[-1].lower()
                == checkpoint.rstrip("/").split("/")[-1].lower())

    def framed_by(self, template: str | None, checkpoint: str | None) -> Any:
        """The block with ``template`` as its chat template where it runs ``checkpoint``'s own
        weights and names no template of its own: a guard's shipped template builds the guard
        instruction itself, and would wrap the already-built prompt a second time. The one
        rule for the guard detectors and CoBia's guard rater. A backend that takes no template
        (a server applies its own) keeps its block."""
        if (template is None or "chat_template" not in type(self).model_fields
                or self.template() or not self.runs_weights_of(checkpoint)):
            return self
        return self.model_copy(update={"chat_template": template})

    def check_speech(self) -> None:
        """What the backend's speech keys need of each other (the hf and vllm blocks say)."""

    def constructor_kwargs(self) -> dict[str, Any]:
        """The keys the backend's constructor takes, as the block sets them; keys left unset
        keep the constructor's own defaults."""
        return self.model_dump(exclude_unset=True, exclude=set(BUILD_KEYS | self.not_passed))
