"""A model card's own system prompt, and how a study's system turn combines with it.

Qwen2.5-Omni's card requires its system prompt for speech output ("You are Qwen, a virtual
human developed by the Qwen Team, Alibaba Group, capable of perceiving auditory and visual
inputs, as well as generating text and speech."): with another one "the audio output may not
work as expected". As the model takes no other system prompt when it speaks, the card's
"Customization Settings" put instructions into the conversation instead: a user turn holding
them, the assistant's "Sure, I got it.", then the real user turn. ``llm.system_prompt`` is the
card's prompt; ``llm.system_turn`` says what becomes of a conversation's own leading system
turns (a study's answer format, FairMT's system prompt):

- ``user_turn``: the card's way above, after the card's system prompt;
- ``append``: one system turn, the card's prompt, a blank line, then the study's text;
- ``replace``: the study's system turn takes the card's place (the card warns that speech
  output may then fail).

A conversation without a system turn gets the card's prompt as its system turn in every mode.
The backends that run such a model (``hf`` speech models, ``vllm``, ``openai``) and the dry
run's record all apply :meth:`SystemPrompt.frame`, so the model is asked the same way wherever
it runs; the request cache keys the unframed conversation with the prompt and the mode.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from benevaudit.llm.base import Conversation

SYSTEM_TURNS = ("user_turn", "append", "replace")
DEFAULT_TURN = "user_turn"
ACKNOWLEDGEMENT = "Sure, I got it."   # the assistant's answer to the instruction turn (the card's)


def _text(content: Any) -> str:
    """A message's text: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


class SystemPrompt(NamedTuple):
    """The card's system prompt and the ``system_turn`` mode (one of :data:`SYSTEM_TURNS`)."""

    text: str
    system_turn: str

    @classmethod
    def of(cls, text: str | None, system_turn: str | None = None) -> SystemPrompt | None:
        """The block's ``system_prompt`` and ``system_turn``; None where it names no prompt."""
        if system_turn is not None and system_turn not in SYSTEM_TURNS:
            raise ValueError(f"llm.system_turn={system_turn!r}: expected one of "
                             f"{list(SYSTEM_TURNS)}")
        return cls(text, system_turn or DEFAULT_TURN) if text else None

    def frame(self, conversation: Conversation) -> Conversation:
        """The conversation as the model is sent it."""
        n = next((i for i, m in enumerate(conversation) if m["role"] != "system"),
                 len(conversation))
        head, rest = list(conversation[:n]), list(conversation[n:])
        out: list[Any] = [{"role": "system", "content": self.text}]   # the card's turn
        if head and self.system_turn == "replace":
            out = head
        elif head and self.system_turn == "append":
            joined = "\n\n".join([self.text, *(_text(m["content"]) for m in head)])
            out = [{"role": "system", "content": joined}]
        elif head:   # user_turn: one instruction turn (several are joined), then the answer
            content: Any = head[0]["content"] if n == 1 else "\n\n".join(
                _text(m["content"]) for m in head)
            answer: Any = (ACKNOWLEDGEMENT if isinstance(content, str)
                           else [{"type": "text", "text": ACKNOWLEDGEMENT}])
            out += [{"role": "user", "content": content},
                    {"role": "assistant", "content": answer}]
        return [*out, *rest]

    def settings(self) -> list[str]:
        """What the request cache's key holds of it."""
        return [self.text, self.system_turn]
