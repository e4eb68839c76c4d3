"""The request cache: an interrupted sweep resumes where it stopped, a repeat run is free.

Each request is keyed by the sha256 of (backend, model, chat-template hash, messages, request
options, sampling incl. seed) for ``chat`` and (backend, model, template hash, messages,
choices) for ``score``. Only the misses of a call reach the backend, in one batch; when some of
them fail, the answered ones are kept, so a rerun sends only the rest. The store
(``llm/store.py``) is safe for many jobs on many hosts sharing one network file system.

With temperature > 0 every backend samples a request from its own seed (``request_seed``, kept
on the ``Completion``), so a cached reply is the one a fresh run of that request would give
(on ``openai``, as far as the server honours seeds).

A stored value is checked before it is used: a chat reply must have a ``Completion``'s fields
and types, a score row one number per choice. One that does not (an older or faulty writer's)
is dropped with a warning and asked again, and the new reply is stored in its place.

A fresh reply is checked the same way before it is stored, whichever backend gave it: a chat
reply whose text is not a string, or that carries no audio where the model was asked to speak
(``ChatModel.speaks``: ``audio_out``), a score row without one number per choice. Such a reply
is never cached; the call's good replies are, and the call fails with one line naming the
backend, the model and what was wrong (a greedy in-process model would give the same reply
again, so it is not asked twice).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benevaudit.errors import ServerError
from benevaudit.llm.base import ChatModel, Completion, Conversation, Sampling
from benevaudit.llm.store import RequestCache, store_dir

__all__ = ["CachedChatModel", "RequestCache", "request_key", "store_dir"]


def request_key(model: ChatModel, kind: str, conversation: Conversation, extra: object) -> str:
    """sha256 of everything that determines the answer; ``extra`` is the sampling or choices.

    A backend's own request options (``modalities``, ``audio``) join the key only where set, so
    the keys of requests without them are those earlier releases wrote."""
    options = model.request_options()
    parts = [kind, model.name, model.model_id, model.template_hash, conversation, extra]
    payload = json.dumps(parts + [options] if options else parts,
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedChatModel(ChatModel):
    """Wraps a backend; answers repeated requests from the cache with ``cached=True``.

    ``path`` None keeps no cache and only counts. The counts (``counts()``) go to a run's
    ``metrics.json``: requests sent to the backend, answered from the cache, retried, failed.
    """

    def __init__(self, model: ChatModel, path: str | Path | None,
                 run_answered: Callable[[], int] | None = None) -> None:
        self.model = model
        # the run's answered requests over all its models (a judge's failure must not report
        # its own count as the run's); None: this model's alone
        self.run_answered = run_answered or self.answered
        self.cache = RequestCache(path) if path is not None else None
        self.name, self.model_id = model.name, model.model_id
        self.template_hash = model.template_hash
        self.hits = 0
        self.misses = 0
        self.failed = 0

    def request_options(self) -> dict[str, object]:
        return self.model.request_options()

    def speaks(self) -> bool:
        return self.model.speaks()

    def __getattr__(self, name: str) -> Any:
        # the backend's own attributes (a tokenizer, an engine) stay reachable through the wrap
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def counts(self) -> dict[str, float]:
        """``requests_sent``, ``cache_hits``, ``retries``, ``failed`` so far."""
        return {"requests_sent": float(self.misses), "cache_hits": float(self.hits),
                "retries": float(getattr(self.model, "retries", 0)),
                "failed": float(self.failed)}

    def answered(self) -> int:
        """Requests of this model answered so far, from the backend or the cache."""
        return self.hits + self.misses - self.failed

    def _lookup(self, keys: list[str], kind: str,
                valid: Callable[[object], bool]) -> dict[str, object]:
        """The stored replies of ``keys`` that are ``valid``; the others are dropped."""
        if self.cache is None:
            return {}
        found = self.cache.get_many(keys)
        bad = [k for k, v in found.items() if not valid(v)]
        if not bad:
            return found
        self.cache.drop(bad, f"are not {kind} replies of this release's shape")
        return {k: v for k, v in found.items() if k not in bad}

    def _ask(self, kind: str, keys: list[str], todo: list[int], send: Any, encode: Any,
             problem: Callable[[object], str | None]) -> dict[int, object]:
        """Send the misses; keep every answer that came back, also when some failed, and
        ``problem`` finds nothing wrong with. A backend that reports each reply as it arrives
        (``on_reply``: the ``openai`` backend's chat) has it stored at once, so a run killed
        mid-call re-sends none answered."""
        error: ServerError | None = None
        stored: set[int] = set()

        def store(j: int, answer: object) -> None:
            if self.cache is not None and problem(answer) is None:
                self.cache.put_many(kind, {keys[todo[j]]: encode(answer)})
                stored.add(j)

        streams = kind == "chat" and hasattr(self.model, "on_reply")
        if streams:
            setattr(self.model, "on_reply", store)   # noqa: B010 (a backend's own hook)
        try:
            answers = dict(enumerate(send()))
        except ServerError as err:
            answers, error = err.done, err
        finally:
            if streams:
                setattr(self.model, "on_reply", None)   # noqa: B010
        bad = {j: why for j, a in answers.items() if (why := problem(a)) is not None}
        if bad:
            answers = {j: a for j, a in answers.items() if j not in bad}
            error = error or ServerError(self._bad_replies(kind, bad, len(todo)), answers)
        # by position: two equal requests in one call each keep the reply sent for them
        fresh = {todo[j]: encode(a) for j, a in answers.items()}
        if self.cache is not None:
            self.cache.put_many(kind, {keys[todo[j]]: fresh[todo[j]]
                                       for j in answers if j not in stored})
        self.misses += len(todo)
        if error is not None:
            self.failed += len(todo) - len(answers)
            raise ServerError(f"{error}; {self.failure_counts()}", answers) from None
        return fresh

    def _bad_replies(self, kind: str, bad: dict[int, str], asked: int) -> str:
        """What a call with malformed replies failed on (never the replies' text)."""
        first = min(bad)
        return (f"{self.name}:{self.model_id}: {len(bad)} of {asked} {kind} replies are not "
                f"replies (request {first} of the call: {bad[first]}); they are not cached")

    def failure_counts(self) -> str:
        """What a failure message says was answered: this model's requests and the run's, and
        whether they are kept (an empty cache is still a cache: it is tested against None)."""
        kept = ("kept in the request cache: a rerun sends only the rest"
                if self.cache is not None else "not kept (no request cache)")
        return (f"{self.answered()} requests to {self.name}:{self.model_id} answered "
                f"({self.run_answered()} over all the run's models), {kept}")

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        extra = dataclasses.asdict(sampling)
        if not sampling.server_defaults:   # keys written before the field existed stay valid
            del extra["server_defaults"]
        keys = [request_key(self.model, "chat", c, extra) for c in conversations]
        found = self._lookup(keys, "chat", is_completion)
        todo = [i for i, k in enumerate(keys) if k not in found]
        fresh: dict[int, object] = {}
        self.hits += len(keys) - len(todo)
        if todo:
            fresh = self._ask("chat", keys, todo, lambda: self.model.chat(
                [conversations[i] for i in todo], sampling),
                lambda r: dataclasses.asdict(dataclasses.replace(r, cached=False)),
                lambda r: reply_problem(r, self.model.speaks()))
        return [Completion(**_fields(fresh[i])) if i in fresh
                else Completion(**{**_fields(found[k]), "cached": True})
                for i, k in enumerate(keys)]

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        keys = [request_key(self.model, "score", c, list(choices)) for c in conversations]
        found = self._lookup(keys, "score", lambda row: is_score_row(row, len(choices)))
        todo = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(keys) - len(todo)
        if todo:
            fresh = self._ask("score", keys, todo, lambda: self.model.score(
                [conversations[i] for i in todo], choices),   # [len(todo), C]
                lambda row: [float(x) for x in row],
                lambda row: row_problem(row, len(choices)))
            found.update({keys[i]: row for i, row in fresh.items()})
        return np.array([found[k] for k in keys], dtype=np.float64).reshape(len(keys), len(choices))

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        self.model.close()


def _fields(value: object) -> dict[str, Any]:
    """A stored completion's fields (a JSON object: what ``dataclasses.asdict`` wrote)."""
    assert isinstance(value, dict)
    return value


_REQUIRED = {"text": str, "finish_reason": str, "prompt_tokens": int, "completion_tokens": int}
_OPTIONAL = {"cached": bool, "seed": int, "audio": str, "transcript": str}   # later fields


def _typed(value: object, kind: type) -> bool:
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def is_completion(value: object) -> bool:
    """A stored chat reply: the fields ``dataclasses.asdict(Completion)`` writes (an earlier
    release's lack the later optional ones), each of its type."""
    if not isinstance(value, dict) or not set(_REQUIRED) <= value.keys() <= {*_REQUIRED,
                                                                          *_OPTIONAL}:
        return False
    return (all(_typed(value[k], t) for k, t in _REQUIRED.items())
            and all(value.get(k) is None or _typed(value[k], t) for k, t in _OPTIONAL.items()))


def reply_problem(reply: object, speaks: bool) -> str | None:
    """What is wrong with a fresh chat reply, in a few words, or None: not a ``Completion``,
    a field not of its type (a text that is None), no audio from a model asked to speak."""
    if not isinstance(reply, Completion):
        return f"a {type(reply).__name__}, not a Completion"
    fields = dataclasses.asdict(reply)
    wrong = [k for k, t in {**_REQUIRED, **_OPTIONAL}.items()
             if not (_typed(fields[k], t) or k in _OPTIONAL and fields[k] is None)]
    if wrong:
        return ", ".join(f"{k} is a {type(fields[k]).__name__}" for k in wrong)
    if speaks and not reply.audio:
        return "no audio, though the model was asked to speak (audio_out)"
    return None


def row_problem(row: object, choices: int) -> str | None:
    """What is wrong with a fresh score row, or None: it holds one number per choice."""
    size = len(row) if isinstance(row, (list, tuple, np.ndarray)) else None
    return None if size == choices else f"{size} log-probabilities for {choices} choices"


def is_score_row(value: object, choices: int) -> bool:
    """A stored score row: one log-probability per choice."""
    return (isinstance(value, list) and len(value) == choices
            and all(_typed(x, int) or _typed(x, float) for x in value))
