"""Audio input on the vLLM engine, in the same form as every backend.

vLLM's own chat path would fetch an ``input_audio`` part itself; here it is decoded and
resampled to the model's feature-extractor rate by :mod:`benevaudit.llm.audio_in` (soundfile,
soxr), the prompt is rendered by the model's own processor chat template (audio parts become
its placeholder, e.g. ``<|audio_bos|><|AUDIO|><|audio_eos|>``), and the samples go to
``LLM.generate`` as ``multi_modal_data``, so hf and vllm hear identical samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benevaudit.llm.audio_in import speech_prompt
from benevaudit.llm.base import Conversation


def processor_of(model: Any) -> Any:
    """The transformers processor of the engine's model (its chat template, its sampling
    rate), loaded once per model."""
    processor = getattr(model, "_speech_processor", None)
    if processor is None:
        from transformers import AutoProcessor  # heavy; loads on first use

        path = model.llm.llm_engine.model_config.model
        processor = AutoProcessor.from_pretrained(path)
        if not hasattr(processor, "feature_extractor"):
            raise ValueError(f"{path}: its processor ({type(processor).__name__}) has no audio "
                             "feature extractor; audio input needs an audio-capable model "
                             "(Qwen2-Audio, Qwen2.5-Omni, Ultravox, ...)")
        model._speech_processor = processor
    return processor


def speech_prompts(model: Any, conversations: Sequence[Conversation]) -> list[dict[str, Any]]:
    """vLLM prompts: the rendered text and the clips as ``(samples, rate)`` at the model's rate."""
    processor = processor_of(model)
    rate = int(processor.feature_extractor.sampling_rate)
    template = getattr(model, "chat_template", None)
    prompts = []
    for i, conv in enumerate(conversations):
        prompt = speech_prompt(conv, rate, i)
        text = processor.apply_chat_template(prompt.messages, add_generation_prompt=True,
                                             tokenize=False, chat_template=template)
        request: dict[str, Any] = {"prompt": text}
        if prompt.clips:
            request["multi_modal_data"] = {"audio": [(c.samples, c.rate) for c in prompt.clips]}
        prompts.append(request)
    return prompts


def speech_generate(model: Any, conversations: Sequence[Conversation], params: list[Any]
                    ) -> list[Any]:
    """The engine's outputs for conversations with audio parts, in order."""
    return list(model.llm.generate(speech_prompts(model, conversations), params,
                                   use_tqdm=False))
