"""What a run that calls models declares: its ``llm`` blocks, sampling, the request cache, and
``dry_run``.

:class:`LLMSpec` is one ``llm`` block (``conf/llm/*.yaml``, a detector's, a judge's, the probe
target's); keys a backend alone takes pass through. :class:`ModelRun` holds the top-level keys
that ``detect``, ``probe`` and ``generate`` share, and the entrypoint's own spec extends it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union

from pydantic import Field, model_validator

from benevaudit.errors import ConfigError
from benevaudit.files import check_llm_files
from benevaudit.llm.cache_files import check_sqlite
from benevaudit.llm.registry import BACKENDS
from benevaudit.llm.dry_run import RequestLog, recording
from benevaudit.specs import NonNegative, NonNegativeInt, Positive, PositiveInt, Share, RunSpec, Spec

log = logging.getLogger(__name__)
REQUESTS = "requests.jsonl"
DRY_RUN = ("true, false, or dry_run.enabled=<bool> with dry_run.tokenizer=<dir | embedded | "
           "none | auto>")


class LLMSpec(Spec):
    """An ``llm`` block: the keys of every backend, since one block serves any of them
    (``detector.llm.backend=hf`` on a guard's vLLM block); a backend's constructor takes its
    own and the rest are dropped. Null keys of a judge detector's ``detector.llm`` override
    nothing."""

    backend: Optional[str] = None
    model: Optional[str] = None
    chat_template: Optional[str] = None
    batch_size: Optional[PositiveInt] = None
    max_model_len: Optional[PositiveInt] = None
    threads: Optional[PositiveInt] = None
    cache: Optional[str] = None
    # hf
    device: Optional[str] = None
    dtype: Optional[str] = None
    prefix_reuse: Optional[bool] = None
    # vllm
    seed: Optional[NonNegativeInt] = None
    tensor_parallel_size: Optional[PositiveInt] = None
    gpu_memory_utilization: Optional[Share] = None
    enforce_eager: Optional[bool] = None
    # openai
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    timeout: Optional[Positive] = None
    max_retries: Optional[NonNegativeInt] = None
    backoff: Optional[NonNegative] = None
    concurrency: Optional[PositiveInt] = None
    fold_system: Optional[bool] = None
    # scripted
    responses: Optional[list[str]] = None
    # hears ``input_audio`` parts (probe.mode=audio needs it; on hf it loads a speech model)
    audio_in: Optional[bool] = None
    audio_out: Optional[bool] = None      # answers in speech too (hf: Qwen2.5-Omni's talker;
    #                                       openai: modalities with audio)
    # the model card's own system prompt (Qwen2.5-Omni's: its talker needs it) and what becomes
    # of a conversation's system turn beside it (llm/system_prompt.py): hf speech, vllm, openai
    system_prompt: Optional[str] = None
    system_turn: Optional[Literal["user_turn", "append", "replace"]] = None
    # hf speech models and vllm: null is none (1.0), whatever the checkpoint's generation config
    repetition_penalty: Optional[Positive] = None
    # hf speech models (llm/hf_speech.py)
    speaker: Optional[str] = None         # Qwen2.5-Omni's voice for spoken replies
    truncate_audio: Optional[bool] = None
    max_speech_tokens: Optional[PositiveInt] = None
    # vllm speech models
    limit_mm_per_prompt: Optional[dict[str, PositiveInt]] = None
    # openai
    modalities: Optional[list[str]] = None     # [text, audio]: a spoken reply too
    audio: Optional[dict[str, str]] = None     # the spoken reply's {voice, format}
    # the request field of the reply cap (max_completion_tokens: OpenAI's own API) and, for a
    # spoken reply, how many completion tokens each token of the cap allows (llm/reply_options.py)
    max_tokens_field: Optional[Literal["max_tokens", "max_completion_tokens"]] = None
    spoken_cap_factor: Optional[PositiveInt] = None
    extra_body: Optional[dict[str, Any]] = None  # vLLM's own sampling parameters

    def check_files(self, key: str) -> None:
        """Its chat template file and a local model directory, read now (``key``: where the
        block sits, ``target.llm``)."""
        check_llm_files(self.chat_template, self.model, key)

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
        template = self.chat_template
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

    def framed_by(self, template: str | None, checkpoint: str | None) -> LLMSpec:
        """The block with ``template`` as its chat template where it runs ``checkpoint``'s own
        weights and names no template of its own: a guard's shipped template builds the guard
        instruction itself, and would wrap the already-built prompt a second time. The one
        rule for the guard detectors and CoBia's guard rater."""
        if template is None or self.chat_template or not self.runs_weights_of(checkpoint):
            return self
        return self.model_copy(update={"chat_template": template})

    def check_speech(self) -> None:
        """``audio_out``: only the hf speech models and the openai backend answer in speech;
        vLLM's engine returns text (its Qwen2.5-Omni runs the thinker alone). ``system_prompt``
        is taken by the hf speech models, vllm and openai."""
        if self.backend == "vllm" and self.audio_out:
            raise ConfigError("llm.audio_out=true: the vllm backend returns text only; run the "
                              "speaking model on hf (llm.backend=hf) or behind an openai server")
        if self.backend == "hf" and self.audio_out and not self.audio_in:
            raise ConfigError("llm.audio_out=true on hf needs llm.audio_in=true (a speech model)")
        if self.backend == "hf" and self.system_prompt and not self.audio_in:
            raise ConfigError("llm.system_prompt on hf needs llm.audio_in=true: the hf speech "
                              "models take a card's system prompt, the text models do not")


class SamplingSpec(Spec):
    """A ``sampling`` block (:class:`benevaudit.llm.Sampling`'s fields)."""

    temperature: NonNegative
    top_p: Share                          # (0, 1]
    max_tokens: PositiveInt
    seed: NonNegativeInt                  # each request's seed base


class DryRunBlock(Spec):
    enabled: bool
    tokenizer: Optional[str] = None       # absent: auto


class DryRun(NamedTuple):
    """``dry_run=true``: detect.py, probe.py and generate.py build every request and send none.

    Each family records its own (``detectors/dry_run.py``, ``probes/dry_run.py``,
    ``generation/dry_run.py``) against the recording models of ``llm/dry_run.py``, into the run
    directory's ``requests.jsonl``. ``tokenizer`` counts prompt tokens (None: each model's own,
    where it is available offline); inputs are checked as in a real run and no weights load.
    """

    tokenizer: str | None

    def record(self, out: Path, what: str, record: Callable[[RequestLog], Any]
               ) -> dict[str, float]:
        """``record(request_log)`` with every model recording into ``out/requests.jsonl``;
        the metrics of ``metrics.json`` (``dry_run/requests``, ``dry_run/dependent_requests``
        and, where every prompt was tokenized, ``dry_run/prompt_tokens`` and
        ``dry_run/prefix_floor_tokens``: what exact prefix caching would still compute)."""
        request_log = RequestLog(out / REQUESTS, self.tokenizer)
        with recording(request_log):
            record(request_log)
        metrics = request_log.metrics()
        log.info("dry run of %s: %d requests (%d depend on an earlier reply)%s; written to %s",
                 what, request_log.requests, request_log.dependent,
                 f", {metrics['dry_run/prompt_tokens']:,.0f} prompt tokens, prefix floor "
                 f"{metrics['dry_run/prefix_floor_tokens']:,.0f}"
                 f"{' (estimate)' if metrics['dry_run/tokens_estimated'] else ''}"
                 if "dry_run/prompt_tokens" in metrics else "", out / REQUESTS)
        return metrics


class ModelRun(RunSpec):
    """The top-level keys of a run that calls models: ``seed``, ``progress``, ``llm_cache``
    (a SQLite request cache, null: none) and ``dry_run`` (``true``, ``false`` or a block)."""

    seed: NonNegativeInt
    progress: bool
    llm_cache: Optional[str]
    dry_run: Annotated[Union[bool, DryRunBlock], Field(description=DRY_RUN)]

    @model_validator(mode="after")
    def cache_readable(self) -> ModelRun:
        if self.llm_cache:
            check_sqlite(self.llm_cache, "llm_cache")
        return self

    def dry(self) -> DryRun | None:
        """The dry run's settings, or None for a real run. ``dry_run.tokenizer=<x>`` alone
        turns it on."""
        node = self.dry_run
        if isinstance(node, bool):
            return DryRun(None) if node else None
        if node.enabled or node.tokenizer not in (None, "auto"):
            return DryRun(node.tokenizer)
        return None
