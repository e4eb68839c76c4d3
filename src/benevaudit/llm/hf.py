"""The transformers backend: CPU or GPU, batched generation, KV-cache reuse when scoring.

Generation pads on the left so every row's next token sits in the last column. Sampling draws
each row from its own generator seeded with the request's seed (``request_seed``: its messages
and the run's seed), so a request gets the same reply alone or in any batch, and the seed is
recorded on its ``Completion``. ``score`` runs each shared prompt once and scores every
candidate continuation from its cached keys and values; ``score`` and greedy ``chat`` start from
the previous prompt's keys and values as :mod:`benevaudit.llm.hf_prefix` describes.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from benevaudit.llm.base import (
    ChatModel,
    Completion,
    Conversation,
    NgramSampling,
    Sampling,
    check_conversations,
    hash_template,
    request_seed,
)
from benevaudit.llm.hf_loading import cut_reply, eos_ids, load_hf
from benevaudit.llm.hf_prefix import (
    DECODE_STEP_TOKENS,
    common_prefix,
    crop_to,
    empty_cache,
    layer_states,
    left_pad,
    padded_cache,
    reuse_pays,
)
from benevaudit.llm.prompting import check_length, choice_ids, prompt_ids, set_chat_template
from benevaudit.llm.row_sampling import RowSampler


class HFChatModel(ChatModel):
    """A causal LM from transformers behind the ``ChatModel`` interface."""

    name = "hf"

    def __init__(self, model: str = "embedded:smollm2", device: str = "auto", dtype: str = "auto",
                 batch_size: int = 8, max_model_len: int | None = None,
                 chat_template: str | None = None, cache_dir: str | None = None,
                 threads: int | None = None, prefix_reuse: bool = True) -> None:
        if threads:  # process-wide; one thread decodes fastest on a small, shared CPU
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device, self.batch_size = device, batch_size
        self.tokenizer, self.model, path = load_hf(model, dtype, device, cache_dir)
        self.model_id = model if model.startswith("embedded:") else path
        self.template_hash = hash_template(set_chat_template(self.tokenizer, model, chat_template))
        limit = getattr(self.model.config, "max_position_embeddings", None) or 2048
        self.max_model_len = min(max_model_len or limit, limit)
        self.pad_id = self.tokenizer.pad_token_id
        if self.pad_id is None:
            self.pad_id = self.tokenizer.eos_token_id
        self.eos_ids = eos_ids(self.tokenizer, self.model)
        # transformers >= 5.2x names the KV cache ``cache`` (in forward and generate); earlier
        # releases ``past_key_values``
        params = inspect.signature(self.model.forward).parameters
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        # only the last position's logits are read when scoring; the LM head over a whole
        # prompt would otherwise cost as much as a third of the prefill
        self.keep_last = "logits_to_keep" in params
        self.prefix_reuse = prefix_reuse
        self._prefix: tuple[list[int], Any] | None = None  # (token ids, their KV cache)
        self.prefill_tokens = 0   # prompt tokens run through the model
        self.prompt_tokens = 0    # prompt tokens asked about (what no reuse would run)
        self._reply_tokens: float | None = None  # mean length of the last greedy replies
        self.decode_step_tokens = DECODE_STEP_TOKENS  # 0: always reuse a repeated prefix
        # prompts' caches pad into one batch (then reuse loses no batching): a DynamicCache of
        # layers without sliding windows
        self.pads_caches = layer_states(empty_cache(self.model.config)) is not None

    # ---- chat -------------------------------------------------------------------------------

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        prompts = [prompt_ids(self.tokenizer, c) for c in conversations]
        for i, ids in enumerate(prompts):
            check_length(i, len(ids) + 1, self.max_model_len, "prompt plus one new token")
        greedy = sampling.temperature == 0
        cap = self.max_model_len if sampling.max_tokens is None else sampling.max_tokens
        if greedy and self.prefix_reuse and self._reuse_pays(prompts, cap):
            out = []
            for start in range(0, len(prompts), self.batch_size):
                out.extend(self._generate_reusing(prompts[start:start + self.batch_size],
                                                  sampling))
        else:
            seeds = [request_seed(list(c), sampling.seed) for c in conversations]
            out = []
            for start in range(0, len(prompts), self.batch_size):
                batch = prompts[start:start + self.batch_size]
                out.extend(self._generate(batch, sampling, seeds[start:start + self.batch_size]))
            self._count(sum(len(p) for p in prompts), reused=0)
        if greedy and out:
            self._reply_tokens = sum(c.completion_tokens for c in out) / len(out)
        return out

    def _reuse_pays(self, prompts: list[list[int]], max_tokens: int) -> bool:
        """Whether greedy decoding from the cached previous prompt saves more than it costs.
        Where the prompts' caches pad into one batch, decoding stays batched, so any repeated
        prefix pays (measured on 2 CPU cores: a guard writing its verdict over context units
        ran 1.63x faster, README ``bench_detect``). Where they decode one at a time, the
        repeated prompt tokens (the first against the cache) must outnumber
        ``decode_step_tokens`` per extra decoding step."""
        previous = self._prefix[0] if self._prefix is not None else []
        step = 0 if self.pads_caches else self.decode_step_tokens
        return reuse_pays(previous, prompts, max_tokens, self._reply_tokens,
                          self.batch_size, step)

    @torch.inference_mode()
    def _generate_reusing(self, prompts: list[list[int]], sampling: Sampling
                          ) -> list[Completion]:
        """Greedy replies to ``prompts``, each prefilled (but for its last token) from the one
        before's keys and values, then decoded together from their left-padded caches, the
        last tokens in the batch's first step. One at a time where caches cannot be padded."""
        if not self.pads_caches or min(map(len, prompts)) < 2:
            return [self._generate_from_prefix(p, sampling) for p in prompts]
        rows: list[list[tuple[Any, Any]]] = []
        for p in prompts:
            _, cache = self._prefill(p[:-1])  # the cache and self._prefix: p[:-1]
            rows.append(layer_states(cache) or [])
            self._count(1, 0)                  # the last token, run in the batch below
        ids, mask = left_pad(prompts, self.pad_id)                  # [B, T]
        cache = padded_cache(self.model.config, rows)               # [B, H, T - 1, D] per layer
        width = ids.shape[1]
        gen = self.model.generate(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device),
                                  **{self.cache_arg: cache},
                                  **self._generate_kwargs(sampling, width))
        return [self._completion(p, row, sampling)
                for p, row in zip(prompts, gen[:, width:].tolist(), strict=True)]

    @torch.inference_mode()
    def _generate_from_prefix(self, prompt: list[int], sampling: Sampling) -> Completion:
        """Greedy decoding of one prompt, its prefill starting from the cached previous
        prompt's keys and values; the prompt's own cache is kept for the next one."""
        reuse, cache = self._cached_prefix(prompt)
        if cache is None:
            cache = empty_cache(self.model.config)
        ids = torch.tensor([prompt], device=self.device)  # [1, P]; the cached part is skipped
        gen = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                  **{self.cache_arg: cache},
                                  **self._generate_kwargs(sampling, len(prompt)))
        self._count(len(prompt), reuse)
        self._prefix = (list(prompt), crop_to(cache, len(prompt)))
        return self._completion(prompt, gen[0, len(prompt):].tolist(), sampling)

    @torch.inference_mode()
    def _generate(self, prompts: list[list[int]], sampling: Sampling,
                  seeds: list[int]) -> list[Completion]:
        ids, mask = left_pad(prompts, self.pad_id)  # [B, T]
        width = ids.shape[1]
        kwargs = self._generate_kwargs(sampling, width)
        sampled = sampling.temperature > 0
        if sampled:  # each row from its own seeded generator; generate then takes that token
            # transformers is heavy and loads on first use
            from transformers import LogitsProcessorList

            kwargs["logits_processor"] = LogitsProcessorList([RowSampler(
                seeds, sampling.temperature, sampling.top_p, device=self.device)])
        gen = self.model.generate(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device), **kwargs)
        gen = gen[:, width:].tolist()  # [B, new]
        return [self._completion(p, row, sampling, seed if sampled else None)
                for p, row, seed in zip(prompts, gen, seeds, strict=True)]

    def _generate_kwargs(self, sampling: Sampling, width: int) -> dict[str, Any]:
        """``generate`` arguments for prompts ``width`` tokens wide."""
        # never transformers' own sampler (one RNG for the whole batch): sampled rows are drawn
        # by RowSampler, so generate itself always runs greedy
        kwargs: dict[str, Any] = dict(
            max_new_tokens=self.max_model_len - width if sampling.max_tokens is None
            else min(sampling.max_tokens, self.max_model_len - width),
            eos_token_id=self.eos_ids, pad_token_id=self.pad_id, do_sample=False,
            temperature=None, top_p=None, top_k=None)
        if sampling.stop:
            kwargs.update(stop_strings=list(sampling.stop), tokenizer=self.tokenizer)
        if isinstance(sampling, NgramSampling) and sampling.no_repeat_ngram_size:   # FairMT
            kwargs["no_repeat_ngram_size"] = sampling.no_repeat_ngram_size
        return kwargs

    def _completion(self, prompt: list[int], row: list[int], sampling: Sampling,
                    seed: int | None = None) -> Completion:
        """Cut a generated row at end-of-turn or a stop string and count its tokens."""
        text, finish, n = cut_reply(self.tokenizer, self.eos_ids, row, sampling.stop)
        return Completion(text, finish, len(prompt), n, seed=seed)

    # ---- score ------------------------------------------------------------------------------

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        cands = choice_ids(self.tokenizer, choices)
        rows = []
        for i, conv in enumerate(conversations):
            prompt = prompt_ids(self.tokenizer, conv)
            check_length(i, len(prompt) + max(len(c) for c in cands), self.max_model_len,
                         "prompt plus the longest choice")
            rows.append(self._score_one(prompt, cands))
        return np.stack(rows) if rows else np.zeros((0, len(cands)))  # [N, C]

    def _cached_prefix(self, prompt: list[int]) -> tuple[int, Any]:
        """How many leading tokens of ``prompt`` the previous prompt's cache holds (at most all
        but one, so one is always computed) and that cache cropped to them, or ``(0, None)``.
        The cache is extended in place from here on, so it stops being the previous prompt's."""
        reuse = 0
        if self.prefix_reuse and self._prefix is not None:
            reuse = common_prefix(self._prefix[0], prompt, len(prompt) - 1)
        cache = crop_to(self._prefix[1], reuse) if reuse and self._prefix else None  # [1, H, reuse, D] per layer
        self._prefix = None
        return reuse, cache

    def _count(self, prompt_len: int, reused: int) -> None:
        self.prefill_tokens += prompt_len - reused
        self.prompt_tokens += prompt_len

    @torch.inference_mode()
    def _prefill(self, prompt: list[int], extra: Sequence[int] = ()) -> tuple[torch.Tensor, Any]:
        """Logits ``[1 + len(extra), V]`` at the prompt's last position and after each token of
        ``extra``, run in the same forward pass, and the KV cache (prompt then extra), reusing
        the previous prompt's cache up to their longest common prefix (at least one token is
        computed). ``extra`` is not counted as prompt tokens."""
        reuse, cache = self._cached_prefix(prompt)
        new = torch.tensor([prompt[reuse:] + list(extra)], device=self.device)  # [1, T]
        kwargs = {self.cache_arg: cache} if cache is not None else {}
        keep = {"logits_to_keep": len(extra) + 1} if self.keep_last else {}
        out = self.model(input_ids=new, use_cache=True, **kwargs, **keep)
        cache = out.cache if self.cache_arg == "cache" else out.past_key_values
        self._count(len(prompt), reuse)
        if self.prefix_reuse:
            self._prefix = (list(prompt), cache)  # cropped back to the prompt by the caller
        return out.logits[0, -(len(extra) + 1):], cache

    @torch.inference_mode()
    def _score_one(self, prompt: list[int], cands: list[list[int]]) -> np.ndarray:
        """Sum of log p(choice tokens | prompt), the prompt's cache shared by every choice.

        The tokens every choice starts with (``<score>`` of ``<score> yes``/``<score> no``)
        run in the prompt's own forward pass; each choice then runs only what follows them
        (nothing when one token is left, as for yes/no), and the cache is cropped back, so it
        still holds exactly the prompt for the next call's prefix reuse.
        """
        limit = min(len(c) for c in cands) - 1  # each choice keeps a token of its own
        shared = min(common_prefix(cands[0], c, limit) for c in cands)
        logits, cache = self._prefill(prompt, cands[0][:shared])  # [1 + shared, V]
        logp = torch.log_softmax(logits.float(), dim=-1)
        total = np.array([float(logp[torch.arange(shared + 1), torch.tensor(c[:shared + 1])].sum())
                          for c in cands], dtype=np.float64)
        for j, c in enumerate(cands):
            if len(c) < shared + 2:
                continue
            ids = torch.tensor([c[shared:-1]], device=self.device)          # [1, r]
            rest = torch.log_softmax(self._extend(ids, cache)[0].float(), dim=-1)
            targets = torch.tensor(c[shared + 1:], device=self.device)
            total[j] += float(rest[torch.arange(len(targets)), targets].sum())
            crop_to(cache, len(prompt) + shared)
        crop_to(cache, len(prompt))
        return total

    def _extend(self, ids: torch.Tensor, cache: Any) -> torch.Tensor:
        """Logits ``[1, T, V]`` of ``ids`` run on top of ``cache`` (extended in place)."""
        return self.model(input_ids=ids, use_cache=True, **{self.cache_arg: cache}).logits
