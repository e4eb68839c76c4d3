"""The ``asr`` block (``conf/asr/*.yaml``), typed."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import model_validator

from benevaudit.errors import ConfigError
from benevaudit.specs import Positive, PositiveInt, Spec


class AsrSpec(Spec):
    """How spoken replies become text: ``kind: none`` (no transcriber) or ``whisper`` (a hub
    id or a local folder of a Whisper checkpoint)."""

    kind: Literal["none", "whisper"]
    name: str                              # what responses.parquet's asr_model says
    model: Optional[str]                   # hub id or local folder; null with kind none
    device: str                            # auto | cpu | cuda[:n]
    dtype: Literal["auto", "float32", "float16", "bfloat16"]
    batch_size: PositiveInt
    language: Optional[str]                # e.g. english; null: Whisper detects it
    chunk_length_s: Positive               # long replies are transcribed in chunks this long

    @model_validator(mode="after")
    def model_named(self) -> AsrSpec:
        if self.kind == "whisper" and not self.model:
            raise ConfigError("asr.model: asr=whisper needs a hub id (openai/whisper-large-v3) "
                              "or a local folder with a Whisper checkpoint")
        model = str(self.model or "")
        if model.startswith(("/", "./", "../", "~")) and not (
                Path(model).expanduser() / "config.json").is_file():
            raise ConfigError(f"asr.model={model}: no Whisper checkpoint there (expected a "
                              "folder with config.json, weights, tokenizer and preprocessor "
                              "files)")
        return self
