"""Chat-template rendering shared by the backends that hold a tokenizer (``hf``, ``vllm``).

Both must turn a conversation into exactly the token ids the model was tuned on, and both
score a label by appending its tokens after the assistant-turn header, so the rendering lives
in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benevaudit.llm.base import Conversation, fold_system

_PROBE = "benevaudit-system-probe"


def set_chat_template(tokenizer: Any, model_id: str, chat_template: str | None) -> str:
    """Install an explicit template (a Jinja string or a ``.jinja`` path) and return the one in use.

    A base model's tokenizer has no template; formatting a chat for it by guesswork would
    silently change every prompt, so it is an error that says how to supply one.
    """
    if chat_template:
        path = Path(chat_template)
        if len(chat_template) < 4096 and "{" not in chat_template and path.is_file():
            chat_template = path.read_text(encoding="utf-8")
        tokenizer.chat_template = chat_template
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"the tokenizer of {model_id!r} has no chat template; pass "
                         "chat_template=<Jinja string or path to a .jinja file> "
                         "(llm.chat_template=... on the command line)")
    return tokenizer.chat_template


def accepts_system(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template has a system role: it renders a system turn
    without raising and keeps its text. Mistral-7B-Instruct-v0.2's raises; some templates drop
    it silently. Decided once per template and remembered on the tokenizer."""
    template = getattr(tokenizer, "chat_template", None)
    known = getattr(tokenizer, "_benevaudit_system_role", None)
    if known is not None and known[0] == template:
        return known[1]
    probe = [{"role": "system", "content": _PROBE}, {"role": "user", "content": "hello"}]
    try:
        ok = _PROBE in tokenizer.apply_chat_template(probe, tokenize=False,
                                                     add_generation_prompt=True)
    except Exception:  # jinja2's TemplateError from raise_exception, or any template failure
        ok = False
    tokenizer._benevaudit_system_role = (template, ok)
    return ok


def chat_messages(tokenizer: Any, conversation: Conversation) -> Conversation:
    """The messages the chat template gets: the system text folded into the first user turn
    when the template has no system role (one rule for generators, judges and probe targets)."""
    if any(m["role"] == "system" for m in conversation) and not accepts_system(tokenizer):
        return fold_system(conversation)
    return list(conversation)


def render_prompt(tokenizer: Any, conversation: Conversation) -> str:
    """The conversation as the model sees it, ending with the assistant-turn header."""
    return tokenizer.apply_chat_template(chat_messages(tokenizer, conversation), tokenize=False,
                                         add_generation_prompt=True)


def prompt_ids(tokenizer: Any, conversation: Conversation) -> list[int]:
    """Token ids of ``render_prompt``; the template already holds every special token."""
    return list(tokenizer(render_prompt(tokenizer, conversation),
                          add_special_tokens=False)["input_ids"])


def choice_ids(tokenizer: Any, choices: Sequence[str]) -> list[list[int]]:
    """Token ids of each candidate continuation, tokenized on its own (no special tokens)."""
    if not choices:
        raise ValueError("score needs at least one choice")
    out = []
    for choice in choices:
        ids = list(tokenizer(choice, add_special_tokens=False)["input_ids"])
        if not ids:
            raise ValueError(f"choice {choice!r} tokenizes to nothing; give a non-empty label")
        out.append(ids)
    return out


def check_length(index: int, n_tokens: int, max_model_len: int, what: str = "prompt") -> None:
    """A prompt that does not fit the context window is an error, never a silent truncation."""
    if n_tokens > max_model_len:
        raise ValueError(f"conversation {index}: {what} is {n_tokens} tokens, longer than "
                         f"max_model_len={max_model_len}; shorten the conversation or raise "
                         "max_model_len (up to the model's max_position_embeddings)")


NextTokenLogprobs = Callable[[list[tuple[list[int], set[int]]]], list[dict[int, float]]]


def score_in_waves(prompts: list[list[int]], cands: list[list[int]],
                   next_logprobs: NextTokenLogprobs) -> np.ndarray:
    """Total log-probability of each candidate after each prompt, one token position a wave.

    Wave ``t`` sends one request per distinct (prompt, first ``t`` label tokens) and asks for
    log p of every label token that can follow it, so a prompt is computed once in wave 0 and
    only extended after that: an engine with a prefix cache never recomputes it.
    ``next_logprobs`` takes ``[(token ids, wanted next tokens)]`` and returns, per request,
    ``{token id: log p}``. Returns ``[n_prompts, n_choices]``.
    """
    total = np.zeros((len(prompts), len(cands)), dtype=np.float64)  # [N, C]
    for t in range(max(len(c) for c in cands)):
        wave: dict[tuple[int, tuple[int, ...]], set[int]] = {}
        for i in range(len(prompts)):
            for c in cands:
                if len(c) > t:
                    wave.setdefault((i, tuple(c[:t])), set()).add(c[t])
        keys = list(wave)
        answers = next_logprobs([(prompts[i] + list(prefix), wave[(i, prefix)])
                                 for i, prefix in keys])
        logps = dict(zip(keys, answers, strict=True))
        for i in range(len(prompts)):
            for j, c in enumerate(cands):
                if len(c) > t:
                    total[i, j] += logps[(i, tuple(c[:t]))][c[t]]
    return total
