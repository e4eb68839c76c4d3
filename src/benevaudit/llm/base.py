"""The one chat interface every LLM consumer codes against.

Generators, guards, judges and probe targets all talk to a model through ``ChatModel``:
``chat`` produces replies and ``score`` gives the log-probability of candidate label
continuations (``"unsafe"``, ``"yes"``/``"no"``) as the start of the assistant reply. Backends
(``hf``, ``vllm``, ``openai``, ``scripted``) differ only in where the tokens come from.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Message = dict[str, str]          # {"role": "system" | "user" | "assistant", "content": str}
Conversation = list[Message]
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Sampling:
    """Decoding settings; part of every cache key, so the same seed gives the same reply."""

    temperature: float = 0.0      # 0 means greedy
    top_p: float = 1.0            # 0 only with temperature 0: greedy, as some APIs spell it
    max_tokens: int | None = 256  # None: no cap (up to the context window, the server's limit)
    seed: int = 0
    stop: tuple[str, ...] = ()
    # openai backend: send no temperature, top_p or seed, so the server decodes with its own
    # defaults (Ollama: the model's parameters), as a client passing no options does; hf and
    # vllm have no server, so they decode with the values above
    server_defaults: bool = False

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"Sampling.temperature must be >= 0, got {self.temperature}")
        if not (0 < self.top_p <= 1 or (self.top_p == 0 and self.temperature == 0)):
            raise ValueError(f"Sampling.top_p must be in (0, 1] (or 0 with temperature 0), "
                             f"got {self.top_p}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"Sampling.max_tokens must be >= 1, got {self.max_tokens}")
        if isinstance(self.stop, (str, list)):
            # a bare string would otherwise become a tuple of single characters
            stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
            object.__setattr__(self, "stop", stop)


@dataclass(frozen=True)
class NgramSampling(Sampling):
    """Sampling that also bans repeating any n-gram of this size in a reply (transformers'
    ``no_repeat_ngram_size``, which FairMT-Bench's generation sets). The ``hf`` backend honours
    it; ``vllm`` and ``openai`` have no such option and decode as :class:`Sampling`. It is a
    subclass so the field joins only its own requests' cache keys."""

    no_repeat_ngram_size: int | None = None


@dataclass(frozen=True)
class Completion:
    """One reply. ``finish_reason`` is ``"stop"`` (end of turn or a stop string) or ``"length"``."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    seed: int | None = None   # the request's own sampling seed (``request_seed``); None: greedy
    # a spoken reply, where the target answered in audio: base64 WAV bytes (JSON-safe, so the
    # request cache stores it as it stores the text), and the server's own transcript of it
    audio: str | None = None
    transcript: str | None = None


def request_seed(conversation: Conversation, seed: int) -> int:
    """The sampling seed of one request, derived from its messages and the run's seed.

    A sampled reply then depends on nothing but the request and the run's seed: not on the
    batch it shared, the order of requests, or whether it came back from a resumed run.
    Kept below 2**31 so every server accepts it.
    """
    blob = json.dumps([conversation, seed], sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(blob.encode("utf-8")).digest()[:8], "little") % 2**31


def fold_system(conversation: Conversation) -> Conversation:
    """The system text moved to the head of the first user turn (``system + "\\n\\n" + user``),
    for chat templates that have no system role (Mistral-7B-Instruct-v0.2 rejects one)."""
    system = [m["content"] for m in conversation if m["role"] == "system"]
    rest = [dict(m) for m in conversation if m["role"] != "system"]
    if not system:
        return list(conversation)
    text = "\n\n".join(str(s) for s in system)
    first = next((i for i, m in enumerate(rest) if m["role"] == "user"), None)
    if first is None:
        return [{"role": "user", "content": text}, *rest]
    content = rest[first]["content"]
    if isinstance(content, list):  # typed parts: the system text becomes a leading text part
        rest[first]["content"] = [{"type": "text", "text": text + "\n\n"}, *content]
    else:
        rest[first]["content"] = text + "\n\n" + content
    return rest


def hash_template(template: str | None) -> str:
    """sha256 of a chat template, or ``"none"``: a changed template must not hit old cache rows."""
    if not template:
        return "none"
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


def check_conversations(conversations: Sequence[Conversation]) -> None:
    """Reject malformed messages before any model work, naming the conversation and message."""
    if isinstance(conversations, (str, dict)):
        raise TypeError("conversations must be a list of conversations (lists of messages)")
    for i, conv in enumerate(conversations):
        if not isinstance(conv, (list, tuple)) or not conv:
            raise ValueError(f"conversation {i} must be a non-empty list of messages")
        for j, msg in enumerate(conv):
            if not isinstance(msg, dict) or msg.get("role") not in ROLES:
                raise ValueError(f"conversation {i}, message {j}: role must be one of {ROLES}, "
                                 f"got {msg.get('role') if isinstance(msg, dict) else msg!r}")
            content = msg.get("content")
            # a list of typed parts is OpenAI's multimodal form (text, input_audio), for
            # audio-capable targets behind the openai and vllm backends
            parts_ok = isinstance(content, list) and content and all(
                isinstance(p, dict) and "type" in p for p in content)
            if not isinstance(content, str) and not parts_ok:
                raise ValueError(f"conversation {i}, message {j}: content must be a string "
                                 "or a list of typed parts ({'type': ...})")


class ChatModel(ABC):
    """A chat model behind one of the backends.

    Attributes:
        name: the backend name (``hf``, ``vllm``, ``openai``, ``scripted``).
        model_id: what was loaded (a directory, hub id, server model name).
        template_hash: sha256 of the chat template, or ``"none"``.
    """

    name: str = "base"
    model_id: str = ""
    template_hash: str = "none"

    @abstractmethod
    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        """One assistant reply per conversation, in order."""

    @abstractmethod
    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        """Log-probabilities ``[n_conversations, n_choices]``.

        Entry ``[i, j]`` is the total log-probability of ``choices[j]`` as the first tokens of
        the assistant reply to ``conversations[i]`` (sum over its tokens). A guard reads
        ``P("unsafe")`` from it; a judge takes a softmax over ``"yes"``/``"no"``.
        """

    def request_options(self) -> dict[str, object]:
        """Options sent with every request that change its answer (``modalities``, ``audio``):
        part of the request cache's key where not empty."""
        return {}

    def speaks(self) -> bool:
        """Whether every reply must carry audio (``audio_out``): the request cache refuses one
        without it rather than keep a text-only reply as the spoken answer."""
        return False

    def close(self) -> None:
        """Release the engine or connection; a no-op where there is nothing to release."""

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
