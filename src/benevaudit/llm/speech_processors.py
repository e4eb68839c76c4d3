"""Speech models whose processor needs torchvision, and the one line a missing one gets.

Qwen2.5-Omni's processor (transformers' ``Qwen2_5OmniProcessor``) holds an image and a video
processor beside its audio feature extractor, and transformers builds the video processor only
with torchvision installed, even for audio-only inputs. vLLM's Qwen2.5-Omni imports its Qwen2-VL
model code, which imports transformers' Qwen2-VL image processing, which imports torchvision at
module level. torchvision's wheels are built against one torch build: PyPI's (CUDA) release does
not load beside a CPU torch (its operators fail to register), so a CPU environment may have
none. Without it the model cannot run on ``hf`` or ``vllm``; the check says so before weights
load, rather than deep in transformers or in vLLM's model inspection.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from benevaudit.errors import DependencyError

# model_type of config.json -> the model's name, for the models whose processor needs torchvision
NEEDS_TORCHVISION = {"qwen2_5_omni": "Qwen2.5-Omni"}


def has_torchvision() -> bool:
    """Whether torchvision can be imported (found; its own import errors surface later)."""
    return importlib.util.find_spec("torchvision") is not None


def torchvision_error(model: str, model_type: str, backend: str) -> str:
    """The one line for ``model`` (of ``model_type``) on ``backend`` without torchvision."""
    name = NEEDS_TORCHVISION.get(model_type, model_type)
    other = "qwen2_audio_7b_vllm" if backend == "vllm" else "qwen2_audio_7b"
    return (f"llm.model={model}: {name} on {backend} needs torchvision (its processor, "
            "transformers' Qwen2_5OmniProcessor, holds a video processor that transformers "
            "builds only with torchvision, even for audio), and it is not installed; install "
            "the torchvision built for this torch (torch 2.13: torchvision 0.28), or use "
            f"target={other}, which needs none")


def model_type_of(model: str) -> str | None:
    """``model_type`` of a local checkpoint's or a cached hub id's config.json; None where
    neither is on this machine (the loader then says what is missing)."""
    path = Path(model).expanduser() / "config.json"
    if not path.is_file() and "/" in model and not model.startswith(("/", ".", "~")):
        from huggingface_hub import try_to_load_from_cache   # transformers' hub client

        cached = try_to_load_from_cache(model, "config.json")
        path = Path(cached) if isinstance(cached, str) else path
    if not path.is_file():
        return None
    try:
        kind = json.loads(path.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        return None
    return kind if isinstance(kind, str) else None


def require_processor_packages(model: str, model_type: str | None, backend: str) -> None:
    """Raise :class:`DependencyError` when ``model_type``'s processor needs torchvision and
    there is none."""
    if model_type in NEEDS_TORCHVISION and not has_torchvision():
        raise DependencyError(torchvision_error(model, model_type, backend))
