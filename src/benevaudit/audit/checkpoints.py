"""A frozen classifier found and loaded from what ``ckpt=`` names: a training run directory, its
``model/`` directory, or a Lightning ``.ckpt`` (a run that kept no ``model/`` is read from its
best checkpoint)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benevaudit.encoders.models import load_tokenizer


def locate(ckpt: str) -> tuple[Path, Path | None]:
    """(weights path, training run directory or None) for a ckpt argument."""
    path = Path(ckpt).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"ckpt={ckpt}: no such file or directory (expected a train run "
                                "directory, its model/ directory, or a .ckpt file)")
    if path.is_dir() and (path / "model" / "config.json").is_file():
        return path / "model", path
    if path.is_dir() and (path / "config.json").is_file():
        run = path.parent if (path.parent / ".hydra").is_dir() else None
        return path, run
    if path.is_file() and path.suffix == ".ckpt":
        run = path.parent.parent if (path.parent.parent / ".hydra").is_dir() else None
        return path, run
    # a run that kept no model/ (save_model=false, as experiment=smoke): its best checkpoint
    saved = sorted((path / "checkpoints").glob("best-*.ckpt")) if path.is_dir() else []
    if not saved and path.is_dir() and (path / "checkpoints" / "last.ckpt").is_file():
        saved = [path / "checkpoints" / "last.ckpt"]
    if saved:
        return saved[-1], path if (path / ".hydra").is_dir() else None
    raise FileNotFoundError(f"ckpt={ckpt}: not a run directory, a transformers model directory "
                            "(config.json) or a .ckpt file")


def load_frozen(weights: Path) -> tuple[Any, Any]:
    """(model, tokenizer) from a model directory or a Lightning checkpoint."""
    if weights.suffix == ".ckpt":
        from benevaudit.audit.module import DialogueClassifier   # heavy: torch and Lightning

        module = DialogueClassifier.load_from_checkpoint(str(weights), map_location="cpu",
                                                         weights_only=True)
        return module.model, load_tokenizer(module.hparams.model_source)
    from transformers import AutoModelForSequenceClassification   # heavy, optional

    model = AutoModelForSequenceClassification.from_pretrained(str(weights))
    return model, load_tokenizer(str(weights))
