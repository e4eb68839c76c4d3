"""Whisper through transformers' automatic-speech-recognition pipeline.

Each WAV is decoded and resampled to the feature extractor's rate (16 kHz) by
:mod:`benevaudit.llm.audio_in` (soundfile, soxr), then transcribed greedily with one beam in
``batch_size`` batches. A reply longer than Whisper's 30-second window is transcribed with the
pipeline's chunked algorithm (``chunk_length_s``, as Whisper-large-v3's model card runs it).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benevaudit.asr.spec import AsrSpec
from benevaudit.errors import ConfigError
from benevaudit.llm.audio_in import Clip, resample

log = logging.getLogger(__name__)
WINDOW_S = 30.0      # Whisper hears 30 s at a time


def load_pipeline(spec: AsrSpec) -> Any:
    """The pipeline of ``spec.model`` (a local folder or a hub id), or an error that says how
    to point at a local copy."""
    import torch   # heavy: only when a Whisper model is loaded
    from transformers import pipeline  # heavy; loads on first use

    model = str(spec.model)
    local = model.startswith(("/", "./", "../", "~"))   # AsrSpec checked the folder
    device = spec.device if spec.device != "auto" else (
        "cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, spec.dtype) if spec.dtype != "auto" else (
        torch.float16 if device.startswith("cuda") else torch.float32)
    try:
        return pipeline("automatic-speech-recognition", model=str(Path(model).expanduser())
                        if local else model, device=device, dtype=dtype)
    except OSError as err:
        offline = " (HF_HUB_OFFLINE=1: a hub id must already be cached)" if os.environ.get(
            "HF_HUB_OFFLINE") == "1" else ""
        raise ConfigError(f"asr.model={model}: cannot load it{offline}: "
                          f"{str(err).splitlines()[0]}; point asr.model at a local folder"
                          ) from None


class Transcriber:
    """Transcribes clips with one Whisper pipeline, loaded once."""

    def __init__(self, spec: AsrSpec) -> None:
        self.spec = spec
        self.pipe = load_pipeline(spec)
        self.rate = int(self.pipe.feature_extractor.sampling_rate)
        self._normaliser: Any = None       # Whisper's English normaliser, built on first use

    def generate_kwargs(self) -> dict[str, Any]:
        """Greedy, one beam, transcription (not translation) in ``asr.language`` if given."""
        kwargs: dict[str, Any] = {"num_beams": 1, "do_sample": False, "task": "transcribe"}
        if self.spec.language:
            kwargs["language"] = self.spec.language
        return kwargs

    def normalise(self, text: str) -> str:
        """``text`` as Whisper's word error rates compare it: the tokenizer's English
        normaliser (lower case, numbers as digits, contractions and fillers, and British
        spellings mapped to American where the checkpoint ships its spelling table)."""
        # heavy; loads with the pipeline
        from transformers.models.whisper.english_normalizer import EnglishTextNormalizer

        if self._normaliser is None:
            spelling = getattr(self.pipe.tokenizer, "english_spelling_normalizer", None) or {}
            self._normaliser = EnglishTextNormalizer(spelling)
        return str(self._normaliser(text))

    def transcribe(self, clips: Sequence[Clip]) -> list[str]:
        """One transcript per clip, in order (stripped of Whisper's leading space)."""
        heard = [resample(c, self.rate) for c in clips]
        out: list[str] = [""] * len(heard)
        short = [i for i, c in enumerate(heard) if c.seconds <= WINDOW_S]
        long = [i for i, c in enumerate(heard) if c.seconds > WINDOW_S]
        for indices, extra in ((short, {}), (long, {"chunk_length_s": self.spec.chunk_length_s,
                                                     "ignore_warning": True})):
            if not indices:
                continue
            # the pipeline pops keys from each input dict, so every clip gets its own
            inputs = [{"raw": heard[i].samples, "sampling_rate": self.rate} for i in indices]
            results = self.pipe(inputs, batch_size=self.spec.batch_size,
                                generate_kwargs=self.generate_kwargs(), **extra)
            for i, result in zip(indices, results, strict=True):
                out[i] = str(result["text"]).strip()
        log.info("transcribed %d spoken replies with %s (%d longer than %.0f s, chunked)",
                 len(heard), self.spec.name, len(long), WINDOW_S)
        return out
