"""The models a probe run loads, one per distinct ``llm`` spec: the embedded defaults serve
as target and rater (or judge) with SmolLM2 loaded once, and every model is closed at the end."""

from __future__ import annotations

from benevaudit.llm import ChatModel, build_from_block
from benevaudit.llm.spec import LLMSpec


class Models:
    """One loaded model per distinct ``llm`` spec, built on first use."""

    def __init__(self, cache: str | None) -> None:
        self.cache = cache
        self.loaded: dict[str, ChatModel] = {}

    def get(self, spec: LLMSpec) -> ChatModel:
        key = spec.model_dump_json(exclude_unset=True)
        if key not in self.loaded:
            self.loaded[key] = build_from_block(spec, cache=self.cache)
        return self.loaded[key]

    def close(self) -> None:
        for model in self.loaded.values():
            model.close()
        self.loaded.clear()
