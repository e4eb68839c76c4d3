"""Applying the configured intervention to chosen splits (both sides of the audit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omegaconf import DictConfig

from benevaudit.pipelines.config import plain
from benevaudit.schema import Dialogue


def edit_splits(splits: dict[str, list[Dialogue]], cfg: DictConfig,
                sides: Sequence[str]) -> tuple[dict[str, list[Dialogue]], dict[str, float]]:
    """Edit the named splits with ``cfg.intervention``; other splits pass through untouched."""
    from benevaudit.audit.interventions import run_interventions, steps_from_config
    from benevaudit.audit.lexicon import load_lexicon
    from benevaudit.corpus import from_table, to_table

    steps = steps_from_config(plain(cfg.get("intervention")) or {})
    if not steps:
        return splits, {}
    lex_path = (plain(cfg.get("lexicon")) or {}).get("path")
    lexicon = load_lexicon(lex_path) if lex_path else None
    out = dict(splits)
    stats: dict[str, float] = {"intervention/steps": float(len(steps))}
    for side in sides:
        table, side_stats = run_interventions(to_table(splits[side]), steps, lexicon,
                                              seed=int(cfg.seed))
        out[side] = from_table(table)
        stats.update({f"{k}_{side}": v for k, v in side_stats.items()})  # intervention/…_<split>
    return out, stats
