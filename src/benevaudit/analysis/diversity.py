"""Self-BLEU and Vendi per generator × class (``diversity.csv``) and each class's mean over
generators (``diversity_by_class.csv``; Self-BLEU on the study's 0–100 scale)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from benevaudit.analysis.markers import dialogue_words
from benevaudit.analysis.spec import AnalysisSpec, SelfBleuSpec, VendiSpec
from benevaudit.analysis.tables import Part, csv_text
from benevaudit.encoders.embeddings import cls_embeddings
from benevaudit.errors import InputError
from benevaudit.metrics.diversity import self_bleu, vendi_from_embeddings
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import render_turns

Cell = tuple[str, str]  # (generator, class)
MEAN = "mean"           # the generator name of a class's mean over generators in metric names


class _CellTokens(Sequence):
    """Word lists of a cell's dialogues, made on access: Self-BLEU reads only its pools."""
    def __init__(self, dialogues: Sequence[Dialogue]) -> None:
        self.dialogues = dialogues

    def __len__(self) -> int:
        return len(self.dialogues)

    # read by index only (Self-BLEU draws its pools by index), never sliced
    def __getitem__(self, i: int) -> list[str]:  # type: ignore[override]  # no slice overload
        return dialogue_words(self.dialogues[i])


def cells(dialogues: Sequence[Dialogue]) -> dict[Cell, list[Dialogue]]:
    groups: dict[Cell, list[Dialogue]] = {}
    for d in dialogues:
        groups.setdefault((d.generator, str(d.label)), []).append(d)   # labelled: analyze.py
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], CLASSES.index(kv[0][1]))))


def self_bleu_metrics(groups: dict[Cell, list[Dialogue]], spec: SelfBleuSpec, seed: int,
                      progress: bool) -> dict[Cell, tuple[float, float]]:
    seeds = [seed + k for k in range(spec.n_seeds)]
    out = {}
    for cell, ds in tqdm(groups.items(), desc="Self-BLEU", disable=not progress):
        result = self_bleu(_CellTokens(ds), seeds, pool_size=spec.pool_size,
                           n_hypotheses=spec.n_hypotheses, n_references=spec.n_references,
                           max_words=spec.max_words, smooth=spec.smooth)
        out[cell] = (result.mean, result.sd)
    return out


def vendi_metrics(groups: dict[Cell, list[Dialogue]], spec: VendiSpec, seed: int,
                  progress: bool) -> dict[Cell, tuple[float, int]]:
    """Vendi score per cell over [CLS] embeddings of a seeded subsample (one model load)."""
    if spec.embedder == "none":
        return {}
    device: str = spec.device
    if device == "auto":
        import torch  # heavy, optional: only to pick the Vendi encoder's device

        device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(seed)
    chosen = {}
    for cell, ds in groups.items():
        take = rng.choice(len(ds), size=min(spec.max_per_cell, len(ds)), replace=False)
        chosen[cell] = [ds[i] for i in sorted(take)]
    texts = [render_turns(d.turns) for ds in chosen.values() for d in ds]
    emb = cls_embeddings(texts, spec.embedder, spec.batch_size, spec.max_length, device, seed,
                         progress)  # [n_total, H]
    out, start = {}, 0
    for cell, ds in chosen.items():
        out[cell] = (vendi_from_embeddings(emb[start:start + len(ds)]), len(ds))
        start += len(ds)
    return out


def diversity(rows: Sequence[dict[str, Any]], groups: dict[Cell, list[Dialogue]],
              spec: AnalysisSpec) -> Part:
    """Self-BLEU (×100, the study's scale) and Vendi per generator × class, and per class as
    the unweighted mean over generators (``analysis/<what>/mean/<class>``): the metrics,
    ``diversity.csv`` and ``diversity_by_class.csv``."""
    if any(gen == MEAN for gen, _ in groups):
        raise InputError(f"a generator is named {MEAN!r}, the name diversity metrics give each "
                         "class's mean over generators; rename it in the corpus")
    sb = self_bleu_metrics(groups, spec.self_bleu, spec.seed, spec.progress)
    vs = vendi_metrics(groups, spec.vendi, spec.seed, spec.progress)
    mtld_by_cell: dict[Cell, list[float]] = {}
    for r in rows:
        mtld_by_cell.setdefault((r["generator"], r["label"]), []).append(r["mtld"])
    metrics: dict[str, float] = {}
    table: list[dict[str, Any]] = []
    for (gen, cls), ds in groups.items():
        row: dict[str, Any] = {"generator": gen, "class": cls, "n": len(ds),
               "mtld_mean": float(np.nanmean(mtld_by_cell[gen, cls])),
               "self_bleu_mean": 100 * sb[gen, cls][0], "self_bleu_sd": 100 * sb[gen, cls][1],
               "vendi": vs.get((gen, cls), (math.nan, 0))[0],
               "vendi_n": vs.get((gen, cls), (math.nan, 0))[1]}
        table.append(row)
        metrics[f"analysis/self_bleu/{gen}/{cls}"] = row["self_bleu_mean"]
        metrics[f"analysis/self_bleu_sd/{gen}/{cls}"] = row["self_bleu_sd"]
        if (gen, cls) in vs:
            metrics[f"analysis/vendi/{gen}/{cls}"] = row["vendi"]
    by_class = class_means(table, bool(vs))
    for row in by_class:
        metrics[f"analysis/self_bleu/{MEAN}/{row['class']}"] = row["self_bleu"]
        if vs:
            metrics[f"analysis/vendi/{MEAN}/{row['class']}"] = row["vendi"]
    return Part(metrics, {"diversity.csv": csv_text(table),
                          "diversity_by_class.csv": csv_text(by_class)})


def class_means(table: Sequence[dict[str, Any]], with_vendi: bool) -> list[dict[str, Any]]:
    """Each class's Self-BLEU and Vendi averaged over generators (each generator counts once,
    whatever its size), as the study reports them."""
    rows = []
    for cls in CLASSES:
        per = [r for r in table if r["class"] == cls]
        if not per:
            continue
        bleu = [r["self_bleu_mean"] for r in per if math.isfinite(r["self_bleu_mean"])]
        vendi = [r["vendi"] for r in per if math.isfinite(r["vendi"])]
        rows.append({"class": cls, "n_generators": len(per),
                     "self_bleu": float(np.mean(bleu)) if bleu else math.nan,
                     "vendi": float(np.mean(vendi)) if with_vendi and vendi else math.nan})
    return rows
