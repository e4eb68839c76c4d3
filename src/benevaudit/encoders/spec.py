"""The ``model`` block: which encoder is fine-tuned and how much of a dialogue it reads."""

from __future__ import annotations

from pydantic import model_validator

from benevaudit.errors import ConfigError
from benevaudit.specs import NonNegativeInt, SequenceLength, Spec


class ModelSpec(Spec):
    """``model=minilm|tiny_bert|bert_base_uncased``: the encoder and its sequence budget."""

    source: str
    max_length: SequenceLength     # tokens incl. [CLS]/[SEP]; BERT-family position embeddings
    head_tokens: NonNegativeInt    # a longer dialogue keeps this head and the tail

    @model_validator(mode="after")
    def head_fits(self) -> ModelSpec:
        if self.head_tokens > self.max_length - 2:
            raise ConfigError(f"model.head_tokens={self.head_tokens}: expected at most "
                              f"model.max_length - 2 = {self.max_length - 2} (the head kept of "
                              "a long dialogue)")
        return self
