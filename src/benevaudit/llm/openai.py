"""The OpenAI-compatible backend: a vLLM server, Ollama, or a hosted API, over HTTP.

``chat`` uses ``/v1/chat/completions`` and works with any such server; requests go out
concurrently so the server can batch them. ``score`` needs a vLLM server: it renders the
conversation with the server's own chat template through vLLM's ``/tokenize`` and then asks
``/v1/completions`` for one token with ``logprob_token_ids`` (the label-token ids), token by
token for multi-token labels. This is the server twin of the offline ``vllm`` backend's
scoring and, unlike ``echo`` + ``logprobs`` (prompt log-probabilities), keeps the server's
prefix cache in play.

Each request sends its own seed (``request_seed``: its messages and the run's seed) and records
it on its ``Completion``; whether a seed makes a sampled reply reproducible is up to the server.
The server applies its own chat template, which this backend cannot inspect:
``fold_system=true`` moves system text into the first user turn for a model without a system
role (Mistral-7B-Instruct-v0.2), as the ``hf`` and ``vllm`` backends do on their own.

The API key is read from the environment variable named by ``api_key_env`` and is sent only
in the Authorization header: it is never stored on the object's public fields or logged.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import requests

from benevaudit.llm.base import (
    ChatModel,
    Completion,
    Conversation,
    Sampling,
    check_conversations,
    fold_system,
    request_seed,
)
from benevaudit.llm.gguf import EMBEDDED_NAME, resolve_model
from benevaudit.llm.prompting import check_length, score_in_waves

RETRY_STATUS = {429, 500, 502, 503, 504}


class OpenAIChatModel(ChatModel):
    """A model behind an OpenAI-compatible HTTP server."""

    name = "openai"

    def __init__(self, model: str = EMBEDDED_NAME, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", timeout: float = 120.0,
                 max_retries: int = 5, backoff: float = 1.0, concurrency: int = 8,
                 cache_dir: str | None = None, fold_system: bool = False) -> None:
        # a vLLM server started with --model <dir> serves the embedded LLM under that path
        self.served = resolve_model(model, cache_dir)
        self.model_id = model
        self.template_hash = "none"  # the server applies its own template; model_id names it
        self.base_url = base_url.rstrip("/")
        self.root_url = self.base_url.removesuffix("/v1")
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.concurrency = concurrency
        self.fold_system = fold_system
        self._session = requests.Session()
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            self._session.headers["Authorization"] = f"Bearer {key}"

    def _post(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST with retries and exponential backoff on connection errors, 429 and 5xx."""
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._session.post(url, json=payload, timeout=self.timeout)
            except (requests.ConnectionError, requests.Timeout) as err:
                problem = f"{type(err).__name__}"
            else:
                if resp.status_code < 400:
                    return resp.json()
                problem = f"HTTP {resp.status_code}: {resp.text[:300]}"
                if resp.status_code not in RETRY_STATUS:
                    raise RuntimeError(f"{url} refused the request ({problem})")
            if attempt < self.max_retries:
                time.sleep(self.backoff * 2 ** attempt)
        raise RuntimeError(f"{url} failed after {self.max_retries + 1} attempts (last: {problem}); "
                           "is the server running and is base_url right?")

    def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(fn, items))

    # ---- chat -------------------------------------------------------------------------------

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        base: dict[str, Any] = dict(model=self.served) if sampling.server_defaults else dict(
            model=self.served, temperature=sampling.temperature, top_p=sampling.top_p)
        if sampling.max_tokens is not None:     # None: no cap, the server's own limit
            base["max_tokens"] = sampling.max_tokens
        if sampling.stop:
            base["stop"] = list(sampling.stop)

        def one(conv: Conversation) -> Completion:
            seed = request_seed(list(conv), sampling.seed)
            messages = self._messages(conv)
            body = self._post(f"{self.base_url}/chat/completions",
                              {**base, "messages": messages,
                               **({} if sampling.server_defaults else {"seed": seed})})
            choice, usage = body["choices"][0], body.get("usage") or {}
            return Completion(text=choice["message"].get("content") or "",
                              finish_reason=choice.get("finish_reason") or "length",
                              prompt_tokens=int(usage.get("prompt_tokens", 0)),
                              completion_tokens=int(usage.get("completion_tokens", 0)),
                              seed=seed if sampling.temperature > 0 else None)

        return self._map(one, conversations)

    def _messages(self, conv: Conversation) -> Conversation:
        return fold_system(conv) if self.fold_system else list(conv)

    # ---- score (vLLM server) ----------------------------------------------------------------

    def _tokenize(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._post(f"{self.root_url}/tokenize", {"model": self.served, **payload})
        except RuntimeError as err:
            raise RuntimeError(f"score needs a vLLM server (its /tokenize endpoint): {err}"
                               ) from None

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        if not choices:
            raise ValueError("score needs at least one choice")
        rendered = self._map(lambda c: self._tokenize(
            {"messages": self._messages(c), "add_generation_prompt": True,
             "add_special_tokens": False}),
            conversations)
        prompts = [r["tokens"] for r in rendered]
        cands = [self._tokenize({"prompt": c, "add_special_tokens": False})["tokens"]
                 for c in choices]
        for choice, ids in zip(choices, cands, strict=True):
            if not ids:
                raise ValueError(f"choice {choice!r} tokenizes to nothing; give a non-empty label")
        longest = max(len(c) for c in cands)
        for i, (ids, r) in enumerate(zip(prompts, rendered, strict=True)):
            check_length(i, len(ids) + longest, int(r["max_model_len"]),
                         "prompt plus the longest choice")
        return score_in_waves(prompts, cands, lambda requests: self._map(
            lambda req: self._next_token_logprobs(*req), requests))  # [N, C]

    def _next_token_logprobs(self, prompt: list[int], targets: set[int]) -> dict[int, float]:
        ids = sorted(targets)
        body = self._post(f"{self.base_url}/completions", dict(
            model=self.served, prompt=prompt, max_tokens=1, temperature=0.0,
            logprobs=len(ids), logprob_token_ids=ids, return_tokens_as_token_ids=True))
        top = body["choices"][0]["logprobs"]["top_logprobs"][0]  # {"token_id:123": logprob}
        found = {int(k.split(":", 1)[1]): float(v) for k, v in top.items()}
        missing = targets - set(found)
        if missing:
            raise RuntimeError(f"the server returned no log-probability for token ids {missing}; "
                               "score needs a vLLM server that supports logprob_token_ids")
        return {tok: found[tok] for tok in targets}

    def close(self) -> None:
        self._session.close()
