"""The OpenAI-compatible backend: a vLLM server, Ollama, or a hosted API, through the official
``openai`` client.

The client owns the wire: retries on connection errors, timeouts, 408/409/429 and 5xx with
exponential backoff, waiting as a ``Retry-After`` header says (``max_retries``, ``timeout``
from the backend's config), and typed replies, audio ones included. This module adds what a
sweep needs on top: a bounded number of requests in flight (``concurrency``, threads: the
client is thread-safe), every answer of a call kept when some of its requests fail (the cache
stores them, a rerun sends only the rest), and counted retries.

``chat`` uses ``/v1/chat/completions`` and works with any such server. ``score`` needs a vLLM
server: it renders the conversation with the server's own chat template through vLLM's
``/tokenize`` and then asks ``/v1/completions`` for one token with ``logprob_token_ids`` (the
label-token ids), token by token for multi-token labels. This is the server twin of the offline
``vllm`` backend's scoring and, unlike ``echo`` + ``logprobs``, keeps the server's prefix cache
in play. vLLM's own parameters go through the client's ``extra_body`` (``extra_body`` of the
config for chat: ``top_k``, ``repetition_penalty``, ``chat_template_kwargs``).

``modalities`` and ``audio`` (``{"voice": ..., "format": "wav"}``) ask an audio-capable target
for a spoken reply: its base64 data lands in ``Completion.audio`` and the server's transcript
in ``Completion.transcript``. Both are part of the request cache's key. ``audio_out`` switches
them: false sends neither (a text reply), true requires both. The reply cap goes in
``max_tokens_field`` (``max_completion_tokens`` for OpenAI's own API), and a spoken reply's
leaves room for its audio tokens (:mod:`.reply_options`). A model card's ``system_prompt`` frames
each conversation as on ``hf`` and ``vllm`` (:mod:`.system_prompt`).

Each request sends its own seed (``request_seed``: its messages and the run's seed) and records
it on its ``Completion``; whether a seed makes a sampled reply reproducible is up to the server.
``fold_system=true`` moves system text into the first user turn for a model without a system
role (Mistral-7B-Instruct-v0.2), as the ``hf`` and ``vllm`` backends do on their own.

Every reply is read as its protocol says before it is used or cached (:mod:`.server_replies`):
a torn JSON body, ``choices`` missing or empty, a message without ``content``, audio that is not
audio. Such a reply is asked again as the client retries a failed request (``max_retries``,
counted in ``retries``); still malformed, it fails the call with a ``ServerError`` naming the
URL, and the answers already received stay in the cache.

The API key is read from the environment variable named by ``api_key_env`` and is handed only
to the client (its Authorization header): it is never stored on this object or logged.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import numpy as np

from benevaudit.errors import DependencyError, ServerError
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
from benevaudit.llm.reply_options import SPOKEN_CAP_FACTOR, reply_cap, spoken_reply
from benevaudit.llm.server_replies import (
    BadReply,
    asked,
    chat_reply,
    json_body,
    tokens_reply,
    top_logprobs,
)
from benevaudit.llm.system_prompt import SystemPrompt

T = TypeVar("T")
R = TypeVar("R")


def _client(base_url: str, key: str | None, timeout: float, max_retries: int,
            on_request: Callable[[Any], None]) -> Any:
    try:
        import openai   # the official client: imported only when the backend is used
    except ImportError:
        raise DependencyError("the openai backend needs the openai package: "
                              "pip install 'openai>=3.57'") from None
    http = openai.DefaultHttpxClient(event_hooks={"request": [on_request]})
    # a local server needs no key; the client insists on one, and vLLM ignores it
    return openai.OpenAI(base_url=base_url, api_key=key or "none", timeout=timeout,
                         max_retries=max_retries, http_client=http)


class OpenAIChatModel(ChatModel):
    """A model behind an OpenAI-compatible HTTP server."""

    name = "openai"

    def __init__(self, model: str = EMBEDDED_NAME, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", timeout: float = 120.0,
                 max_retries: int = 5, concurrency: int = 8, cache_dir: str | None = None,
                 fold_system: bool = False, modalities: list[str] | None = None,
                 audio: dict[str, Any] | None = None, audio_out: bool | None = None,
                 extra_body: dict[str, Any] | None = None, max_tokens_field: str | None = None,
                 spoken_cap_factor: int | None = None, system_prompt: str | None = None,
                 system_turn: str | None = None) -> None:
        # a vLLM server started with --model <dir> serves the embedded LLM under that path
        self.served = resolve_model(model, cache_dir)
        self.model_id = model
        self.template_hash = "none"  # the server applies its own template; model_id names it
        self.base_url = base_url.rstrip("/")
        self.root_url = self.base_url.removesuffix("/v1")
        self.concurrency = max(1, concurrency)
        self.fold_system = fold_system
        self.modalities, self.audio = spoken_reply(modalities, audio, audio_out)
        self.extra_body = dict(extra_body) if extra_body else None
        self.cap_field, self.spoken_cap_factor = max_tokens_field, spoken_cap_factor
        reply_cap(None, max_tokens_field, False)           # a wrong field fails here, not later
        self.system = SystemPrompt.of(system_prompt, system_turn)
        self.max_retries = max_retries
        self.retries = 0
        # called with (position, reply) as each chat reply arrives: the cache stores it at once
        self.on_reply: Callable[[int, Completion], None] | None = None
        self._count = threading.Lock()
        key = os.environ.get(api_key_env) if api_key_env else None
        self._client = _client(self.base_url, key, timeout, max_retries, self._on_request)

    def _on_request(self, request: Any) -> None:
        """The client marks a retry with ``x-stainless-retry-count``; count them."""
        if int(request.headers.get("x-stainless-retry-count", "0") or 0) > 0:
            self._retried()

    def _retried(self) -> None:
        with self._count:
            self.retries += 1

    def _asked(self, fetch: Callable[[], T]) -> T:
        """``fetch()`` asked again while its reply is malformed, as the client retries."""
        return asked(fetch, self.max_retries, self._retried)

    def request_options(self) -> dict[str, object]:
        spoken_cap = self.spoken() and (self.spoken_cap_factor or SPOKEN_CAP_FACTOR)
        return {k: v for k, v in (("modalities", self.modalities), ("audio", self.audio),
                                  ("extra_body", self.extra_body), ("spoken_cap", spoken_cap),
                                  ("system", self.system and self.system.settings())) if v}

    def spoken(self) -> bool:
        """Whether requests ask for a spoken reply (its cap then leaves room for the audio)."""
        return "audio" in (self.modalities or [])
    speaks = spoken     # a spoken request's reply must carry audio (the cache checks it)

    def _map(self, fn: Callable[[T], R], items: Sequence[T], what: str,
             on_done: Callable[[int, R], None] | None = None) -> list[R]:
        """``fn`` over ``items`` with at most ``concurrency`` in flight, ``on_done(i, answer)``
        as each arrives. When one fails past its retries the rest are not started; the answers
        that came back travel on the error."""
        import openai   # the official client: imported only when the backend is used

        stop = threading.Event()

        def guarded(i: int, item: T) -> R:
            if stop.is_set():          # another request failed past its retries: not sent
                raise _NotSent
            try:
                answer = fn(item)
            except (openai.APIError, BadReply):
                stop.set()
                raise
            if on_done is not None:
                on_done(i, answer)
            return answer

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(guarded, i, item) for i, item in enumerate(items)]
            wait(futures, return_when=FIRST_EXCEPTION)
            for f in futures:
                f.cancel()
        done = {i: f.result() for i, f in enumerate(futures) if _answered(f)}
        if len(done) == len(items):
            return [done[i] for i in range(len(items))]
        errors = [f.exception() for f in futures if f.done() and not f.cancelled()]
        error = next(e for e in errors if e is not None and not isinstance(e, _NotSent))
        if not isinstance(error, (openai.APIError, BadReply)):
            raise error
        raise ServerError(f"{self.base_url}: {what} failed after {self.max_retries} retries "
                          f"({_describe(error)}); "
                          f"{len(done)} of this call's {len(items)} requests done",
                          dict(done)) from None

    # ---- chat -------------------------------------------------------------------------------

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        base: dict[str, Any] = dict(model=self.served) if sampling.server_defaults else dict(
            model=self.served, temperature=sampling.temperature, top_p=sampling.top_p)
        # None: no cap, the server's own limit; a spoken reply's cap leaves room for the audio
        base.update(reply_cap(sampling.max_tokens, self.cap_field, self.spoken(),
                              self.spoken_cap_factor))
        if sampling.stop:
            base["stop"] = list(sampling.stop)
        if self.modalities:
            base["modalities"] = self.modalities
        if self.audio:
            base["audio"] = self.audio
        if self.extra_body:
            base["extra_body"] = self.extra_body

        audio_format = str((self.audio or {}).get("format", "")) or None

        def one(conv: Conversation) -> Completion:
            seed = request_seed(list(conv), sampling.seed)
            reply = self._asked(lambda: chat_reply(json_body(
                self._client.chat.completions.with_raw_response.create(
                    **base, messages=self._messages(conv),
                    **({} if sampling.server_defaults else {"seed": seed})).content),
                audio_format))
            return Completion(text=reply.text, finish_reason=reply.finish_reason,
                              prompt_tokens=reply.prompt_tokens,
                              completion_tokens=reply.completion_tokens,
                              seed=seed if sampling.temperature > 0 else None,
                              audio=reply.audio, transcript=reply.transcript)

        return self._map(one, conversations, "chat", self.on_reply)

    def _messages(self, conv: Conversation) -> Conversation:
        conv = self.system.frame(conv) if self.system else list(conv)
        return fold_system(conv) if self.fold_system else conv

    # ---- score (vLLM server) ----------------------------------------------------------------

    def _tokenize(self, payload: dict[str, Any]) -> tuple[list[int], int | None]:
        """vLLM's ``/tokenize`` of a chat (``messages``: its tokens and ``max_model_len``) or
        of a ``prompt`` (its tokens)."""
        import openai   # the official client: imported only when the backend is used

        def fetch() -> tuple[list[int], int | None]:
            try:
                data = self._client.post(f"{self.root_url}/tokenize", cast_to=object,
                                         body={"model": self.served, **payload})
            except (ValueError, RecursionError):   # the client's JSON decoding of a torn body
                raise BadReply("a /tokenize body that is not JSON") from None
            return tokens_reply(data, "messages" in payload)

        try:
            return self._asked(fetch)
        except openai.NotFoundError:
            raise ServerError(f"{self.root_url}/tokenize: not found; score needs a vLLM server "
                              "(its /tokenize endpoint)") from None

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        if not choices:
            raise ValueError("score needs at least one choice")
        rendered = self._map(lambda c: self._tokenize(
            {"messages": self._messages(c), "add_generation_prompt": True,
             "add_special_tokens": False}), conversations, "score (/tokenize)")
        prompts = [tokens for tokens, _ in rendered]
        cands = [tokens for tokens, _ in self._map(lambda c: self._tokenize(
            {"prompt": c, "add_special_tokens": False}), choices, "score (/tokenize)")]
        for choice, ids in zip(choices, cands, strict=True):
            if not ids:
                raise ValueError(f"choice {choice!r} tokenizes to nothing; give a non-empty label")
        longest = max(len(c) for c in cands)
        for i, (ids, (_, limit)) in enumerate(zip(prompts, rendered, strict=True)):
            check_length(i, len(ids) + longest, int(limit or 0), "prompt plus the longest choice")
        return score_in_waves(prompts, cands, lambda requests: self._map(
            lambda req: self._next_token_logprobs(*req), requests, "score"))  # [N, C]

    def _next_token_logprobs(self, prompt: list[int], targets: set[int]) -> dict[int, float]:
        ids = sorted(targets)
        found = self._asked(lambda: top_logprobs(json_body(
            self._client.completions.with_raw_response.create(
                model=self.served, prompt=prompt, max_tokens=1, temperature=0.0,
                logprobs=len(ids), extra_body={"logprob_token_ids": ids,
                                               "return_tokens_as_token_ids": True}).content)))
        missing = targets - set(found)
        if missing:
            raise RuntimeError(f"the server returned no log-probability for token ids {missing}; "
                               "score needs a vLLM server that supports logprob_token_ids")
        return {tok: found[tok] for tok in targets}

    def close(self) -> None:
        self._client.close()


class _NotSent(Exception):
    """A request left unsent because another of its call failed past its retries."""


def _answered(future: Future[Any]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _describe(error: Exception) -> str:
    """The client's error in a few words, without the reply body (it may quote the prompt)."""
    if isinstance(error, BadReply):
        return f"a malformed reply: {error}"
    status = getattr(error, "status_code", None)
    kind = type(error).__name__
    return f"{kind}, HTTP {status}" if status else f"{kind}: is the server running and is " \
        "base_url right?"
