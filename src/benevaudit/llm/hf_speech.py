"""Speech models in-process on ``hf``: Qwen2.5-Omni and Qwen2-Audio hear the speaker.

A target block with ``audio_in: true`` on the ``hf`` backend gets this model instead of the
text-only one. Conversations come in the OpenAI form (``input_audio`` parts, base64 WAV);
:mod:`benevaudit.llm.audio_in` decodes and resamples them to the feature extractor's rate, and
the model's own processor (``AutoProcessor``: its chat template, Whisper features, the audio
placeholder tokens) builds the inputs, so prompts are exactly what the model was tuned on.

Decoding is greedy with one beam, as the FairDialogue study ran it; a sampled run draws each row
from its own seeded generator (``RowSampler``), as the text backend does. No repetition penalty
applies unless ``repetition_penalty`` sets one: the checkpoint's ``generation_config.json`` (1.1
for Qwen2-Audio-7B-Instruct, beside its sampling settings) is not read, so a reply is the one
vLLM decodes (its ``SamplingParams`` default is 1.0, and ``vllm`` takes the same option). A
model card's system prompt (``system_prompt``, Qwen2.5-Omni's) frames every conversation as
:mod:`benevaudit.llm.system_prompt` says, the same on every backend. With
``audio_out: true`` Qwen2.5-Omni's talker speaks the thinker's reply: its waveform (24 kHz)
comes back as ``Completion.audio`` (base64 WAV) beside the text. The talker samples its speech
codes with the model's published settings, seeded per request, so a reply's audio is
reproducible; what the reply *says* is the thinker's greedy text.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benevaudit.errors import DependencyError
from benevaudit.llm.audio_in import SpeechPrompt, check_seconds, encode_wav, speech_prompt
from benevaudit.llm.hf_loading import cut_reply
from benevaudit.llm.base import (
    ChatModel,
    Completion,
    Conversation,
    Sampling,
    check_conversations,
    hash_template,
    request_seed,
)
from benevaudit.llm.row_sampling import RowSampler
from benevaudit.llm.speech_processors import torchvision_error
from benevaudit.llm.system_prompt import SystemPrompt

log = logging.getLogger(__name__)

# model_type of config.json -> the transformers class that loads it
SPEECH_MODELS = {
    "qwen2_audio": "Qwen2AudioForConditionalGeneration",
    "qwen2_5_omni": "Qwen2_5OmniForConditionalGeneration",
}
SPEAKS = ("qwen2_5_omni",)      # the models with a talker (speech out)
OMNI_RATE = 24000               # Qwen2.5-Omni's token2wav writes 24 kHz audio


def load_speech(model: str, dtype: str, device: str, audio_out: bool) -> tuple[Any, Any, str]:
    """Processor, model and model type of a speech checkpoint (a hub id or a directory)."""
    import transformers  # heavy; loads on first use

    path = str(Path(model).expanduser()) if model.startswith("~") else model
    kind = transformers.AutoConfig.from_pretrained(path).model_type
    if kind not in SPEECH_MODELS:
        raise ValueError(f"llm.model={model}: model_type {kind!r} is no speech model the hf "
                         f"backend runs; audio_in on hf takes {sorted(SPEECH_MODELS)} "
                         "(Qwen2-Audio, Qwen2.5-Omni), or serve it with vllm/openai")
    if audio_out and kind not in SPEAKS:
        raise ValueError(f"llm.model={model}: {kind} answers in text only; audio_out=true "
                         f"needs one of {list(SPEAKS)}")
    processor = load_processor(path, model, kind)     # first: a missing package fails fast
    torch_dtype = getattr(torch, dtype) if dtype != "auto" else (
        torch.bfloat16 if device.startswith("cuda") else torch.float32)
    extra = {"enable_audio_output": audio_out} if kind in SPEAKS else {}
    net = getattr(transformers, SPEECH_MODELS[kind]).from_pretrained(
        path, dtype=torch_dtype, **extra).to(device).eval()
    return processor, net, kind


def load_processor(path: str, model: str, kind: str) -> Any:
    """The checkpoint's own processor, left-padding; a processor that needs torchvision
    (Qwen2.5-Omni's) where there is none is one :class:`DependencyError` line."""
    import transformers  # heavy; loads on first use

    try:
        processor = transformers.AutoProcessor.from_pretrained(path)
    except ImportError as err:
        if "torchvision" not in str(err).lower():
            raise
        raise DependencyError(torchvision_error(model, kind, "hf")) from None
    processor.tokenizer.padding_side = "left"   # the next token of every row in the last column
    return processor


class HFSpeechChatModel(ChatModel):
    """A transformers speech model (audio in; text, or text and speech, out)."""

    name = "hf"

    def __init__(self, model: str, device: str = "auto", dtype: str = "auto",
                 batch_size: int = 1, max_model_len: int | None = None,
                 threads: int | None = None, audio_out: bool = False,
                 speaker: str | None = None, system_prompt: str | None = None,
                 system_turn: str | None = None, truncate_audio: bool = False,
                 max_speech_tokens: int | None = None,
                 repetition_penalty: float | None = None) -> None:
        if threads:
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        # speech out one request at a time: the talker samples from the request's own seed, so
        # its audio must not depend on the batch it shared
        self.device, self.audio_out = device, audio_out
        self.batch_size = 1 if audio_out else batch_size
        self.speaker, self.system = speaker, SystemPrompt.of(system_prompt, system_turn)
        self.repetition_penalty = repetition_penalty or 1.0
        self.truncate_audio, self.max_speech_tokens = truncate_audio, max_speech_tokens
        self.processor, self.model, self.kind = load_speech(model, dtype, device, audio_out)
        self.model_id = model
        self.tokenizer = self.processor.tokenizer
        # the cache key's template part also holds what shapes the reply besides the messages
        # (the repetition penalty too: replies cached before it was set here had the checkpoint's)
        settings = json.dumps([self.system and self.system.settings(), audio_out, speaker,
                               truncate_audio, max_speech_tokens, self.repetition_penalty])
        self.template_hash = hash_template(f"{self.processor.chat_template}\n{settings}")
        extractor = self.processor.feature_extractor
        self.rate = int(extractor.sampling_rate)                 # 16 kHz for both families
        self.window = extractor.n_samples / self.rate            # seconds one clip may hold
        self.lm = self.model.thinker if self.kind in SPEAKS else self.model
        text_config = self.lm.config.get_text_config()
        limit = getattr(text_config, "max_position_embeddings", None) or 32768
        self.max_model_len = min(max_model_len or limit, limit)
        self.eos_ids = _eos_ids(self.lm, self.tokenizer)
        self.truncated = 0        # clips cut to the extractor's window (truncate_audio=true)
        self.last_inputs: dict[str, Any] = {}     # the last batch's processor output (shapes)

    def speaks(self) -> bool:
        return self.audio_out

    # ---- inputs -----------------------------------------------------------------------------

    def _prompts(self, conversations: Sequence[Conversation], offset: int) -> list[SpeechPrompt]:
        prompts = []
        for i, conv in enumerate(conversations):
            conv = self.system.frame(conv) if self.system else list(conv)
            prompts.append(speech_prompt(conv, self.rate, offset + i))
        return prompts

    def _inputs(self, prompts: list[SpeechPrompt], extra_text: Sequence[str] = ()) -> Any:
        """The processor's batch: ``input_ids`` [B, T] (left-padded; each clip's placeholder
        expanded to its audio tokens), ``input_features`` [clips, mel, frames] and
        ``feature_attention_mask`` [clips, frames]."""
        texts = [self.processor.apply_chat_template(p.messages, add_generation_prompt=True,
                                                    tokenize=False) for p in prompts]
        texts = [t + (extra_text[i] if extra_text else "") for i, t in enumerate(texts)]
        clips = [c.samples for p in prompts for c in p.clips]
        kwargs: dict[str, Any] = {"audio": clips, "sampling_rate": self.rate} if clips else {}
        batch = self.processor(text=texts, return_tensors="pt", padding=True, **kwargs)
        self.last_inputs = {k: tuple(v.shape) for k, v in batch.items() if hasattr(v, "shape")}
        return batch.to(self.device)

    # ---- chat -------------------------------------------------------------------------------

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling) -> list[Completion]:
        check_conversations(conversations)
        out: list[Completion] = []
        for start in range(0, len(conversations), self.batch_size):
            batch = list(conversations[start:start + self.batch_size])
            prompts = self._prompts(batch, start)
            self.truncated += check_seconds(prompts, self.window, self.truncate_audio,
                                            self.model_id, start)
            seeds = [request_seed(c, sampling.seed) for c in batch]
            out.extend(self._generate(prompts, sampling, seeds))
        return out

    def generate_kwargs(self, sampling: Sampling, width: int, seeds: list[int]) -> dict[str, Any]:
        """``generate`` arguments of the text decoder: greedy, one beam, the block's repetition
        penalty in place of the checkpoint's (a sampled run draws each row with ``RowSampler``
        on top of greedy selection)."""
        if width >= self.max_model_len:
            raise ValueError(f"prompt of {width} tokens leaves no room to reply within "
                             f"max_model_len={self.max_model_len}")
        room = self.max_model_len - width
        kwargs: dict[str, Any] = dict(
            max_new_tokens=room if sampling.max_tokens is None else min(sampling.max_tokens, room),
            do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None,
            repetition_penalty=self.repetition_penalty, eos_token_id=self.eos_ids, pad_token_id=self.tokenizer.pad_token_id)
        if sampling.temperature > 0:
            from transformers import LogitsProcessorList  # heavy; loads on first use

            kwargs["logits_processor"] = LogitsProcessorList([RowSampler(
                seeds, sampling.temperature, sampling.top_p, device=self.device)])
        if sampling.stop:
            kwargs.update(stop_strings=list(sampling.stop), tokenizer=self.tokenizer)
        return kwargs

    @torch.inference_mode()
    def _generate(self, prompts: list[SpeechPrompt], sampling: Sampling,
                  seeds: list[int]) -> list[Completion]:
        batch = self._inputs(prompts)
        width = int(batch["input_ids"].shape[1])
        kwargs = self.generate_kwargs(sampling, width, seeds)
        waves: list[np.ndarray | None] = [None] * len(prompts)
        if self.audio_out:
            torch.manual_seed(seeds[0])   # the talker's sampling (one request per batch)
            talker = {"talker_max_new_tokens": self.max_speech_tokens} if self.max_speech_tokens \
                else {}
            ids, audio = self.model.generate(
                **batch, generation_mode="audio", **{f"thinker_{k}": v for k, v in kwargs.items()},
                **({"speaker": self.speaker} if self.speaker else {}), **talker)
            audio = audio if isinstance(audio, (list, tuple)) else [audio]
            waves = [a.reshape(-1).float().cpu().numpy() for a in audio]
        else:
            ids = self.lm.generate(**batch, **kwargs)
        rows = ids[:, width:].tolist()    # [B, new]
        sampled = sampling.temperature > 0
        return [self._completion(width, row, sampling, wave, seed if sampled else None)
                for row, wave, seed in zip(rows, waves, seeds, strict=True)]

    def _completion(self, width: int, row: list[int], sampling: Sampling,
                    wave: np.ndarray | None, seed: int | None) -> Completion:
        text, finish, n = cut_reply(self.tokenizer, self.eos_ids, row, sampling.stop)
        audio = (base64.b64encode(encode_wav(wave, OMNI_RATE)).decode("ascii")
                 if wave is not None and wave.size else None)
        return Completion(text, finish, width, n, seed=seed, audio=audio)

    # ---- score ------------------------------------------------------------------------------

    @torch.inference_mode()
    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]) -> np.ndarray:
        """Sum of log p(choice tokens | the heard prompt), one forward pass per choice."""
        check_conversations(conversations)
        if not choices:
            raise ValueError("score needs at least one choice")
        rows = []
        for i, conv in enumerate(conversations):
            prompt = self._prompts([conv], i)
            check_seconds(prompt, self.window, self.truncate_audio, self.model_id, i)
            width = int(self._inputs(prompt)["input_ids"].shape[1])
            totals = []
            for choice in choices:
                batch = self._inputs(prompt, [choice])
                logits = self.lm(**batch).logits[0, width - 1:-1].float()   # [len(choice), V]
                targets = batch["input_ids"][0, width:]
                logp = torch.log_softmax(logits, dim=-1)
                totals.append(float(logp[torch.arange(len(targets)), targets].sum()))
            rows.append(totals)
        return np.asarray(rows, dtype=np.float64).reshape(len(conversations), len(choices))


def _eos_ids(lm: Any, tokenizer: Any) -> list[int]:
    """Every token that ends an assistant turn: the generation config's, and ``<|im_end|>``."""
    ids = lm.generation_config.eos_token_id
    ids = list(ids) if isinstance(ids, (list, tuple)) else ([ids] if ids is not None else [])
    for token in ("<|im_end|>", tokenizer.eos_token):
        tid = tokenizer.convert_tokens_to_ids(token) if token else None
        if isinstance(tid, int) and tid != tokenizer.unk_token_id and tid not in ids:
            ids.append(tid)
    if not ids:
        raise ValueError("the speech model has no end-of-turn token; cannot tell where a "
                         "reply ends")
    return ids
