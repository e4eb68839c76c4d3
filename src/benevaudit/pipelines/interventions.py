"""The configured intervention (``intervention``, ``lexicon.path``, ``seed``) applied to chosen
splits; the editing itself is ``audit/interventions/splits.py``."""

from __future__ import annotations

from collections.abc import Sequence

from omegaconf import DictConfig

from benevaudit.audit.interventions import splits as edit
from benevaudit.pipelines.config import plain
from benevaudit.schema import Dialogue


def edit_splits(splits: dict[str, list[Dialogue]], cfg: DictConfig,
                sides: Sequence[str]) -> tuple[dict[str, list[Dialogue]], dict[str, float]]:
    """Edit the named splits with ``cfg.intervention``; other splits pass through untouched."""
    return edit.edit_splits(splits, plain(cfg.get("intervention")) or {},
                            (plain(cfg.get("lexicon")) or {}).get("path"), int(cfg.seed), sides)
