"""The dry-run backend: every request a run would send, recorded, with no model behind it.

While a :class:`RequestLog` is active (``with recording(log):``), ``build_from_block`` hands
out a :class:`DryRunChatModel` for every ``llm`` block, whatever its backend, so every
detector, judge, guard, probe target and generator is dry-run without code of its own. Each
``chat``/``score`` call is written to ``requests.jsonl``: the messages, the prompt rendered the
way the project renders it (its own role-only guard templates; a model's shipped template only
when its tokenizer is at hand offline), the scored choices, and token counts when a tokenizer
is available. Replies are the placeholder ``{reply}`` and scores are uniform, so a request
built from an earlier reply carries the placeholder and is marked ``depends_on``.

A request's identity (``id``, ``unit``, ``method``, ...) comes from the pipeline: tags that hold
for a block of requests (:func:`scope`), identities of requests by their messages or in send
order (:func:`expect`). A request whose messages extend an earlier request and its placeholder
reply (a feedback round, a follow-up question) inherits that request's identity. An expected
identity may name the request it waits for with ``reads``: that request's identity as recorded
(one request serving several items, such as a turn that dialogues share, is read by each).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from benevaudit.errors import ConfigError
from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling, check_conversations
from benevaudit.llm.dry_run_audio import audio_fields, audio_part
from benevaudit.llm.dry_run_tokens import Tokenizers
from benevaudit.llm.prefix_floor import PrefixTrie

log = logging.getLogger(__name__)
PLACEHOLDER = "{reply}"
DERIVED = ("judge", "unit")   # identity keys a request reading another's reply adds to its own
NAMING = ("after", "reads")   # identity keys naming the request waited for: depends_on says it
# The log models record into within ``recording``: per thread and task, gone after the block.
_RECORDING: ContextVar[RequestLog | None] = ContextVar("dry_run_request_log", default=None)


def _key(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def _text_only(conversation: Conversation) -> list[dict[str, Any]]:
    """Messages as written to requests.jsonl; audio parts name their stimulus, not its bytes."""
    def part(p: Any) -> Any:
        if isinstance(p, dict) and p.get("type") == "input_audio":
            return audio_part(p)      # its stimulus path, seconds and sha256
        return p

    return [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
             else [part(p) for p in m["content"]]} for m in conversation]


class RequestLog:
    """Writes requests.jsonl and keeps the dry run's counts.

    Args:
        path: the ``requests.jsonl`` to write.
        tokenizer: ``auto`` (each model's own tokenizer where it is available offline),
            ``none``, ``embedded`` (SmolLM2's, an estimate for other models) or a directory.
    """

    def __init__(self, path: str | Path, tokenizer: str | None = "auto") -> None:
        self.path = Path(path)
        self.tokenizers = Tokenizers(tokenizer)
        self.file = self.path.open("w", encoding="utf-8")
        self.requests = self.dependent = 0
        self.prompt_tokens = 0
        self.uncounted: dict[str, str] = {}      # model -> why its prompts have no count
        self.estimated: set[str] = set()         # models counted with another tokenizer
        self.tries: dict[str, PrefixTrie] = {}   # one prefix cache per model
        self._scope: dict[str, Any] = {}
        self._fifo: deque[dict[str, Any]] = deque()
        self._by_messages: dict[str, deque[dict[str, Any]]] = {}
        self._replies: dict[str, tuple[dict[str, Any], int]] = {}  # conv + reply -> source
        self._last: dict[str, int] = {}          # identity -> its latest request
        self._last_of_id: dict[str, int] = {}    # a request's ``id`` -> its latest request

    # ---- identity -------------------------------------------------------------------------
    @contextmanager
    def scope(self, **tags: Any) -> Iterator[None]:
        saved, self._fifo = (dict(self._scope), self._fifo), deque()
        self._scope.update(tags)
        try:
            yield
        finally:
            self._scope, self._fifo = saved

    def expect(self, identities: Sequence[dict[str, Any]],
               conversations: Sequence[Conversation] | None = None) -> None:
        """Identities of coming requests: matched by their messages when given, else in order."""
        if conversations is None:
            self._fifo.extend(dict(i) for i in identities)
            return
        for ident, conv in zip(identities, conversations, strict=True):
            self._by_messages.setdefault(_key(_text_only(conv)), deque()).append(dict(ident))

    def _identify(self, messages: list[dict[str, Any]], tags: dict[str, Any]
                  ) -> tuple[dict[str, Any], int | None]:
        """(identity, the request whose reply these messages extend, if any)."""
        identity = {**self._scope, **tags}
        queue = self._by_messages.get(_key(messages))
        if queue:
            return {**identity, **queue.popleft()}, None
        for k in range(len(messages) - 1, 0, -1):   # the longest earlier request + its reply
            if messages[k - 1] == {"role": "assistant", "content": PLACEHOLDER}:
                source = self._replies.get(_key(messages[:k]))
                if source is not None:
                    ident, seq = source
                    return {**ident, **identity}, seq
        if self._fifo:
            identity.update(self._fifo.popleft())
        return identity, None

    def _source_of(self, identity: dict[str, Any], extends: int | None) -> int | None:
        """The request whose reply this one waits for: the latest earlier chat request of the
        same identity (the previous message of a self-chat, the previous feedback round), else
        of the identity it derives from (a rater reading the target's reply), or the request
        whose conversation it extends, whichever came last. ``reads`` names it outright."""
        if "reads" in identity:
            return self._last.get(_key(identity["reads"]))
        found = self._last.get(_key(identity))
        if found is None:
            found = self._last.get(_key({k: v for k, v in identity.items() if k not in DERIVED}))
        if found is None and "after" in identity:   # a named earlier request (DAN's first call)
            found = self._last_of_id.get(str(identity["after"]))
        return max((s for s in (found, extends) if s is not None), default=None)

    # ---- recording ------------------------------------------------------------------------
    def record_chat(self, model: DryRunChatModel, conversation: Conversation,
                    choices: Sequence[str] | None, max_tokens: int | None) -> int:
        """Write one chat or score request; returns its prompt token count (0 when unknown)."""
        messages = _text_only(conversation)
        sent = _text_only(model.frame(conversation))   # as the backend sends it (its framing)
        identity, extends = self._identify(messages, model.tags)
        dependent = extends is not None or any(
            isinstance(m["content"], str) and PLACEHOLDER in m["content"] for m in messages)
        source = self._source_of(identity, extends) if dependent else None
        rendered = self.tokenizers.render(model.model_id, model.chat_template, sent)
        shown = {k: v for k, v in identity.items() if k not in NAMING}   # depends_on says it
        row: dict[str, Any] = {"request": self.requests, **shown, "model": model.model_id,
                               "backend": model.served_by, "messages": sent,
                               "prompt": rendered.prompt,
                               "choices": list(choices) if choices is not None else None}
        if max_tokens is not None:
            row["max_tokens"] = max_tokens
        row.update(audio_fields(model.model_id, sent))
        self._count(model.model_id, rendered.ids, rendered.why, rendered.estimate, row)
        if dependent:
            row["depends_on"] = source
            self.dependent += 1
        self._write(row)
        identity.pop("reads", None)     # a later request reads this one by what it is
        if choices is None:  # a reply exists only for chat requests
            self._replies[_key([*messages, {"role": "assistant", "content": PLACEHOLDER}])] = (
                identity, row["request"])
            self._last[_key(identity)] = row["request"]
            if "id" in identity:
                self._last_of_id[str(identity["id"])] = row["request"]
        return row.get("prompt_tokens", 0)

    def record_text(self, model_id: str, text: str, max_length: int | None,
                    append_eos: bool = False, eos_token: str | None = None, **tags: Any) -> None:
        """A sequence classifier's input: no chat, the text itself is the prompt, ending in the
        EOS the real run appends where the classifier appends one: ``eos_token`` as the option
        writes it out, else its own tokenizer's (never an estimating tokenizer's). ``eos`` says
        which EOS ends the prompt (None: none is appended, or it is not known here)."""
        eos = None
        if append_eos:
            tok, estimate, _ = self.tokenizers.find(model_id)
            eos = eos_token or (tok.eos_token if tok is not None and not estimate else None)
            text += eos or ""
        ids, why, estimate = self.tokenizers.encode(model_id, text, max_length)
        row = {"request": self.requests, **self._scope, **tags, "model": model_id,
               "messages": None, "prompt": text, "choices": None, "eos": eos}
        self._count(model_id, ids, why, estimate, row)
        self._write(row)

    def record_opaque(self, model_id: str, why: str, **tags: Any) -> None:
        """A request whose input this package does not render as text (a trained encoder)."""
        row = {"request": self.requests, **self._scope, **tags, "model": model_id,
               "messages": None, "prompt": None, "choices": None}
        self._count(model_id, None, why, False, row)
        self._write(row)

    def _count(self, model_id: str, ids: list[int] | None, why: str | None, estimate: bool,
               row: dict[str, Any]) -> None:
        if ids is None:
            self.uncounted.setdefault(model_id, why or "no tokenizer")
            return
        row["prompt_tokens"] = len(ids)
        self.prompt_tokens += len(ids)
        self.tries.setdefault(model_id, PrefixTrie()).add(ids)
        if estimate:
            self.estimated.add(model_id)

    def _write(self, row: dict[str, Any]) -> None:
        self.file.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.requests += 1

    # ---- results --------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """``dry_run/*``; token figures only when every request was counted."""
        out = {"dry_run/requests": float(self.requests),
               "dry_run/dependent_requests": float(self.dependent)}
        if self.uncounted:
            log.info("dry_run/prompt_tokens and dry_run/prefix_floor_tokens left out: %s; "
                     "dry_run.tokenizer=<dir> supplies a tokenizer, dry_run.tokenizer=embedded "
                     "estimates with the embedded LLM's", "; ".join(
                         f"{m}: {why}" for m, why in sorted(self.uncounted.items())))
            return out
        if self.requests:
            out["dry_run/prompt_tokens"] = float(self.prompt_tokens)
            out["dry_run/prefix_floor_tokens"] = float(sum(t.nodes for t in self.tries.values()))
            out["dry_run/tokens_estimated"] = float(bool(self.estimated))
            if self.estimated:
                log.info("token counts are an ESTIMATE: %s counted with another model's "
                         "tokenizer (%s)", sorted(self.estimated), self.tokenizers.choice)
        return out

    def close(self) -> None:
        self.file.close()


class DryRunChatModel(ChatModel):
    """Records requests instead of answering them: ``{reply}`` replies, uniform scores.

    Args:
        model: the model the request is meant for (its tokenizer is looked up offline).
        chat_template, frame: the block's explicit template, and what the backend does to a
            conversation first (a card's system prompt), applied as the real backend would.
        served_by: the backend that would serve it (``hf``, ``vllm``, ...), for the record.
        tags: identity fields every request of this model carries.
        log: where requests go; the active :func:`recording` when omitted.
    """

    name = "dry_run"

    def __init__(self, model: str = "dry_run", chat_template: str | None = None,
                 served_by: str | None = None, tags: dict[str, Any] | None = None,
                 log: RequestLog | None = None,
                 frame: Callable[[Conversation], Conversation] = list) -> None:
        if (found := log or active()) is None:
            raise ConfigError("the dry_run backend records requests of a dry run; run the "
                              "entrypoint with dry_run=true instead of llm.backend=dry_run")
        self.log, self.model_id, self.chat_template = found, str(model), chat_template
        self.served_by, self.tags, self.frame = served_by, dict(tags or {}), frame

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        return [Completion(PLACEHOLDER, "stop",
                           self.log.record_chat(self, conv, None, sampling.max_tokens), 0)
                for conv in conversations]

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        check_conversations(conversations)
        if not choices:
            raise ValueError("score needs at least one choice")
        for conv in conversations:
            self.log.record_chat(self, conv, choices, None)
        return np.full((len(conversations), len(choices)), -np.log(len(choices)))


@contextmanager
def recording(request_log: RequestLog) -> Iterator[RequestLog]:
    """Within it, every model built from an ``llm`` block records into ``request_log``."""
    token = _RECORDING.set(request_log)
    try:
        yield request_log
    finally:
        _RECORDING.reset(token)
        request_log.close()


def active() -> RequestLog | None:
    return _RECORDING.get()


@contextmanager
def scope(**tags: Any) -> Iterator[None]:
    """Identity fields for the requests sent within; a no-op outside a dry run."""
    current = active()
    with current.scope(**tags) if current is not None else nullcontext():
        yield


def expect(identities: Sequence[dict[str, Any]],
           conversations: Sequence[Conversation] | None = None) -> None:
    """Identities of the coming requests (see ``RequestLog.expect``); a no-op outside a dry run."""
    current = active()
    if current is not None:
        current.expect(identities, conversations)
