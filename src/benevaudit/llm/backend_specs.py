"""One ``llm`` block per backend, each with the keys its backend takes, told apart by
``backend``: ``LLMSpec`` is their union, the type every config field holding a block has.

A key no backend takes is refused with the block's keys listed. A key of another backend is
refused too, naming the backends that take it (``target.llm.base_url: the hf backend takes no
base_url (keys of openai)``), unless it is null: a block written for one backend then serves
another where its own keys are left null (``detector.llm.backend=hf`` on a guard's block, whose
vLLM keys are null). Two blocks take more:

- ``scripted`` stands in for any model in tests and smoke runs (``target.llm.backend=scripted``
  on any target), so it takes every backend's keys and ignores them;
- a block without a backend (a judge detector's ``detector.llm``, whose non-null keys override
  the judge's own block) takes every backend's keys, checked once laid over that block.
"""

from __future__ import annotations

import logging
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Optional, Union, cast

from pydantic import create_model, model_validator

from benevaudit.errors import ConfigError
from benevaudit.llm.block import LLMBlock
from benevaudit.llm.registry import BACKENDS
from benevaudit.llm.system_prompt import SystemPrompt
from benevaudit.registry import tagged_union
from benevaudit.specs import NonNegativeInt, Positive, PositiveInt, Share, Spec

log = logging.getLogger(__name__)
SystemTurn = Literal["user_turn", "append", "replace"]


class Closed(LLMBlock):
    """A block of one backend: other backends' keys are refused unless null."""

    stands_in: ClassVar[bool] = False     # scripted: every backend's keys taken and ignored

    @model_validator(mode="before")
    @classmethod
    def others_keys(cls, data: Any) -> Any:
        """Null keys of other backends are dropped (a block serves another backend with its
        own keys null); a stand-in drops them all. What is left of other backends is refused
        as an unknown key, and :meth:`foreign_key` says whose it is."""
        if not isinstance(data, dict):
            return data
        dropped = [k for k, v in data.items() if k not in cls.model_fields and k in KEYS_OF
                   and (v is None or cls.stands_in)]
        if dropped and cls.stands_in:
            log.debug("llm backend %s ignores %s", data.get("backend"), sorted(dropped))
        return {k: v for k, v in data.items() if k not in dropped}

    @classmethod
    def foreign_key(cls, key: str, full: str) -> str | None:
        """What the refusal of ``key`` (at dotted ``full``) says where another backend takes
        it; None for a key no backend takes."""
        owners = KEYS_OF.get(key)
        if not owners:
            return None
        backend = cls.model_fields["backend"].annotation.__args__[0]   # type: ignore[union-attr]
        where = full.rpartition(".")[0] or "llm"
        return (f"the {backend} backend takes no {key} (keys of {', '.join(owners)}); drop it "
                f"(~{full}) or set it to null, or run the block on {owners[0]} "
                f"({where}.backend={owners[0]})")

    def overridden(self, overrides: dict[str, Any]) -> dict[str, Any]:
        """The block with ``overrides`` (non-null keys: a judge detector's ``detector.llm``)
        laid over it. An override that names another backend keeps the block's keys that
        backend takes too (the model, ``max_model_len``), not those of the one it replaces."""
        block = self.model_dump(exclude_unset=True)
        backend = overrides.get("backend", self.backend)
        if backend != self.backend:
            taken = BACKENDS.specs().get(str(backend), LLMBlock).model_fields
            block = {k: v for k, v in block.items() if k in taken}
        return {**block, **overrides}


class SystemKeys(Closed):
    """A model card's system prompt (Qwen2.5-Omni's: its talker needs it) and what becomes of a
    conversation's system turn beside it (llm/system_prompt.py): hf speech, vllm, openai."""

    system_prompt: Optional[str] = None
    system_turn: Optional[SystemTurn] = None

    def system(self) -> SystemPrompt | None:
        return SystemPrompt.of(self.system_prompt, self.system_turn)


class InProcessKeys(Closed):
    """What a model run in this process takes: its template, dtype and context length."""

    chat_template: Optional[str] = None   # a Jinja string or .jinja path
    dtype: Optional[str] = None
    max_model_len: Optional[PositiveInt] = None
    # null is none (1.0), whatever the checkpoint's generation config (hf speech models, vllm)
    repetition_penalty: Optional[Positive] = None

    def template(self) -> str | None:
        return self.chat_template


class HFSpec(InProcessKeys, SystemKeys):
    """``backend: hf``: transformers (``llm/hf.py``; ``audio_in: true``: ``llm/hf_speech.py``)."""

    backend: Literal["hf"]
    device: Optional[str] = None
    batch_size: Optional[PositiveInt] = None
    threads: Optional[PositiveInt] = None
    prefix_reuse: Optional[bool] = None
    # the speech models (llm/hf_speech.py)
    speaker: Optional[str] = None         # Qwen2.5-Omni's voice for spoken replies
    truncate_audio: Optional[bool] = None
    max_speech_tokens: Optional[PositiveInt] = None

    def check_speech(self) -> None:
        """``audio_out`` and ``system_prompt`` are the speech models' (``audio_in: true``)."""
        if self.audio_out and not self.audio_in:
            raise ConfigError("llm.audio_out=true on hf needs llm.audio_in=true (a speech model)")
        if self.system_prompt and not self.audio_in:
            raise ConfigError("llm.system_prompt on hf needs llm.audio_in=true: the hf speech "
                              "models take a card's system prompt, the text models do not")


BACKENDS.add("hf", HFSpec, "benevaudit.llm.hf:HFChatModel")


class VLLMSpec(InProcessKeys, SystemKeys):
    """``backend: vllm``: the offline engine (``llm/vllm.py``); its own engine arguments too."""

    backend: Literal["vllm"]
    seed: Optional[NonNegativeInt] = None
    tensor_parallel_size: Optional[PositiveInt] = None
    gpu_memory_utilization: Optional[Share] = None
    enforce_eager: Optional[bool] = None
    limit_mm_per_prompt: Optional[dict[str, PositiveInt]] = None    # speech models

    not_passed: ClassVar[frozenset[str]] = frozenset({"audio_out"})   # no engine argument

    def check_speech(self) -> None:
        """vLLM's engine returns text (its Qwen2.5-Omni runs the thinker alone)."""
        if self.audio_out:
            raise ConfigError("llm.audio_out=true: the vllm backend returns text only; run the "
                              "speaking model on hf (llm.backend=hf) or behind an openai server")


BACKENDS.add("vllm", VLLMSpec, "benevaudit.llm.vllm:VLLMChatModel")   # imported when built


class OpenAISpec(SystemKeys):
    """``backend: openai``: any OpenAI-compatible server (``llm/openai.py``)."""

    backend: Literal["openai"]
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    timeout: Optional[Positive] = None
    max_retries: Optional[NonNegativeInt] = None
    concurrency: Optional[PositiveInt] = None
    fold_system: Optional[bool] = None
    modalities: Optional[list[str]] = None     # [text, audio]: a spoken reply too
    audio: Optional[dict[str, str]] = None     # the spoken reply's {voice, format}
    # the request field of the reply cap (max_completion_tokens: OpenAI's own API) and, for a
    # spoken reply, how many completion tokens each token of the cap allows (llm/reply_options.py)
    max_tokens_field: Optional[Literal["max_tokens", "max_completion_tokens"]] = None
    spoken_cap_factor: Optional[PositiveInt] = None
    extra_body: Optional[dict[str, Any]] = None  # vLLM's own sampling parameters


BACKENDS.add("openai", OpenAISpec, "benevaudit.llm.openai:OpenAIChatModel")


class ScriptedSpec(Closed):
    """``backend: scripted``: seeded or listed replies, no model (``llm/scripted.py``)."""

    backend: Literal["scripted"]
    responses: Optional[list[str]] = None

    stands_in: ClassVar[bool] = True
    not_passed: ClassVar[frozenset[str]] = frozenset({"audio_out"})


BACKENDS.add("scripted", ScriptedSpec, "benevaudit.llm.scripted:ScriptedChatModel")
# the shipped backends' blocks, by backend
BACKEND_SPECS = cast(dict[str, type[Closed]], BACKENDS.specs())
# each key a backend alone (or some backends) take -> those backends
KEYS_OF: dict[str, list[str]] = {}
for _name, _spec in BACKEND_SPECS.items():
    for _key in _spec.model_fields:
        if _key not in LLMBlock.model_fields:
            KEYS_OF.setdefault(_key, []).append(_name)


class UnsetSpec(HFSpec, VLLMSpec, OpenAISpec, ScriptedSpec):
    """A block without a backend: a judge detector's ``detector.llm``, every key of every
    backend (checked once laid over the judge's block), or a CoBia rater's that asks no
    model."""

    backend: Optional[None] = None     # type: ignore[assignment]

    stands_in: ClassVar[bool] = False


def backend(block: Any) -> str:
    """The tag an ``llm`` block is told apart by: its ``backend``, ``null`` where unset."""
    name = block.get("backend") if isinstance(block, dict) else getattr(block, "backend", None)
    return "null" if name is None else str(name)


if TYPE_CHECKING:
    LLMSpec = Union[HFSpec, VLLMSpec, OpenAISpec, ScriptedSpec, UnsetSpec]
else:   # one member per registered backend, and the block without one
    LLMSpec = BACKENDS.union({"null": UnsetSpec}, backend)


class Block(Spec):
    """One ``llm`` block alone, validated as a config field holds it."""

    llm: LLMSpec


def llm_spec(block: Any, where: str = "") -> LLMSpec:
    """The typed block of ``block`` (a mapping; a typed block is returned as is), found at
    ``<where>.llm``: a refused key is named as ``<where>.llm.<key>``."""
    if isinstance(block, LLMBlock):
        return block    # type: ignore[return-value]
    return holder(tuple(BACKENDS.specs().items())).of({"llm": dict(block)}, where).llm


@cache
def holder(specs: tuple[tuple[str, type[Spec]], ...]) -> type[Block]:
    """:class:`Block`, or where a backend registered since this module was read (a plugin's),
    its like over every backend registered now."""
    if dict(specs) == BACKEND_SPECS:
        return Block
    union = tagged_union({**dict(specs), "null": UnsetSpec}, backend)
    return create_model("Block", __base__=Block, llm=(union, ...))
