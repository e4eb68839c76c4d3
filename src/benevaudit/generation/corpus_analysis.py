"""How the classes of a generated corpus differ before any model sees them.

Per-dialogue markers and MTLD (``markers.csv``), Cohen's d of each biased class against a
reference class (``marker_effects.csv``, ``marker_effects.png``, ``mtld_by_class.png``),
Self-BLEU and Vendi per generator x class (``diversity.csv``) and each class's mean over
generators (``diversity_by_class.csv``; Self-BLEU on the study's 0-100 scale), the blind
annotation subset and, given returned labels, Cohen's kappa (``annotation_confusion.csv``).
Every function takes plain values; ``analyze.py`` wires them to its config.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from benevaudit.encoders.embeddings import cls_embeddings
from benevaudit.errors import InputError
from benevaudit.figure_titles import fit_titles
from benevaudit.generation.annotation_guide import GUIDE_NAME, write_guide
from benevaudit.metrics import agreement as agr
from benevaudit.metrics.diversity import mtld, self_bleu, vendi_from_embeddings
from benevaudit.metrics.linguistic import MARKER_NAMES, dialogue_markers, marker_effects
from benevaudit.plotting import plt
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import render_turns, words
Cell = tuple[str, str]  # (generator, class)
MEAN = "mean"           # the generator name of a class's mean over generators in metric names


def _tokens(d: Dialogue, speaker: str = "all") -> list[str]:
    """Words of a dialogue's turns (punctuation marks included), speaker prefixes excluded."""
    return [w for t in d.turns if speaker in ("all", t.speaker) for w in words(t.text)]


class _CellTokens(Sequence):
    """Word lists of a cell's dialogues, made on access: Self-BLEU reads only its pools."""
    def __init__(self, dialogues: Sequence[Dialogue]) -> None:
        self.dialogues = dialogues

    def __len__(self) -> int:
        return len(self.dialogues)

    def __getitem__(self, i: int) -> list[str]:  # type: ignore[override]
        return _tokens(self.dialogues[i])


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["empty"])
        writer.writeheader()
        writer.writerows({k: ("" if isinstance(v, float) and math.isnan(v) else v)
                          for k, v in r.items()} for r in rows)
    return path


def corpus_size(dialogues: Sequence[Dialogue]) -> dict[str, float]:
    """The corpus as the study's Table 2 describes it: dialogues, messages (turns in all),
    mean turns per dialogue, and each class's count and share (its balance)."""
    n = len(dialogues)
    turns = sum(len(d.turns) for d in dialogues)
    out = {"analysis/n_dialogues": float(n), "analysis/n_messages": float(turns),
           "analysis/mean_turns": turns / n if n else 0.0}
    for c in CLASSES:
        k = sum(1 for d in dialogues if d.label == c)
        out |= {f"analysis/n_{c}": float(k), f"analysis/share_{c}": k / n if n else 0.0}
    return out


def per_dialogue(dialogues: Sequence[Dialogue], mtld_cfg: dict[str, Any], progress: bool,
                 ) -> list[dict[str, Any]]:
    """One row per dialogue: its markers and its MTLD (over lowercased words)."""
    rows = []
    for d in tqdm(dialogues, desc="markers+MTLD", disable=not progress):
        toks = [w.lower() for w in _tokens(d, mtld_cfg["speaker"]) if w[0].isalnum()]
        rows.append({"id": d.id, "label": d.label, "generator": d.generator, "role": d.role,
                     **dialogue_markers(d.turns),
                     "mtld": mtld(toks, float(mtld_cfg["threshold"]))})
    return rows


def marker_metrics(rows: Sequence[dict[str, Any]], reference: str, out: Path,
                   ) -> dict[str, float]:
    """Class means and Cohen's d of every marker; the effects table and its bar chart."""
    classes = [c for c in CLASSES if any(r["label"] == c for r in rows)]
    values = {c: {m: [r[m] for r in rows if r["label"] == c] for m in (*MARKER_NAMES, "mtld")}
              for c in classes}
    effects = marker_effects(values, reference)
    metrics: dict[str, float] = {}
    table = []
    for c in classes:
        metrics[f"analysis/n_{c}"] = float(len(values[c]["mtld"]))
        metrics[f"analysis/mtld_mean_{c}"] = float(np.nanmean(values[c]["mtld"]))
        metrics[f"analysis/mtld_sd_{c}"] = float(np.nanstd(values[c]["mtld"], ddof=1))
        for m in MARKER_NAMES:
            metrics[f"analysis/marker_mean/{c}/{m}"] = float(np.nanmean(values[c][m]))
    for c, per in effects.items():
        for m, d in per.items():
            metrics[f"analysis/d_{c}_vs_{reference}/{m}"] = d
            table.append({"marker": m, "class": c, "mean": np.nanmean(values[c][m]),
                          f"mean_{reference}": np.nanmean(values[reference][m]), "d": d})
    write_csv(table, out / "marker_effects.csv")
    plot_marker_effects(effects, reference, out / "marker_effects.png")
    plot_mtld(values, out / "mtld_by_class.png")
    return metrics


def plot_marker_effects(effects: dict[str, dict[str, float]], reference: str, path: Path) -> None:
    """Grouped bars of Cohen's d per marker, one colour per biased class (the study's Figure 2)."""
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(len(effects), 1)
    x = np.arange(len(MARKER_NAMES))
    for i, (cls, per) in enumerate(effects.items()):
        ax.bar(x + (i - (len(effects) - 1) / 2) * width,
               [per[m] if math.isfinite(per[m]) else 0.0 for m in MARKER_NAMES], width, label=cls)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(x, [m.removesuffix("_rate") for m in MARKER_NAMES], rotation=30, ha="right")
    ax.set_ylabel(f"Cohen's d vs {reference}")
    ax.set_title(f"Patronising-language markers, each class vs {reference}"
                 f"\nrun {path.resolve().parent.name}")
    ax.legend(title="class")
    fit_titles(fig)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def plot_mtld(values: dict[str, dict[str, list[float]]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(5, 4))
    data = [[v for v in values[c]["mtld"] if math.isfinite(v)] for c in values]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(values) + 1), list(values))
    ax.set_ylabel("MTLD per dialogue")
    ax.set_title(f"Lexical diversity (MTLD, bidirectional, 0.72)\nrun {path.resolve().parent.name}",
                 fontsize=9)
    fit_titles(fig)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def cells(dialogues: Sequence[Dialogue]) -> dict[Cell, list[Dialogue]]:
    groups: dict[Cell, list[Dialogue]] = {}
    for d in dialogues:
        groups.setdefault((d.generator, d.label), []).append(d)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], CLASSES.index(kv[0][1]))))


def self_bleu_metrics(groups: dict[Cell, list[Dialogue]], sb: dict[str, Any], seed: int,
                      progress: bool) -> dict[Cell, tuple[float, float]]:
    seeds = [seed + k for k in range(int(sb["n_seeds"]))]
    sampling = {k: sb[k] for k in ("pool_size", "n_hypotheses", "n_references", "max_words",
                                   "smooth")}
    out = {}
    for cell, ds in tqdm(groups.items(), desc="Self-BLEU", disable=not progress):
        result = self_bleu(_CellTokens(ds), seeds, **sampling)
        out[cell] = (result.mean, result.sd)
    return out


def vendi_metrics(groups: dict[Cell, list[Dialogue]], vd: dict[str, Any], seed: int,
                  progress: bool) -> dict[Cell, tuple[float, int]]:
    """Vendi score per cell over [CLS] embeddings of a seeded subsample (one model load)."""
    if vd["embedder"] == "none":
        return {}
    device = vd["device"]
    if device == "auto":
        import torch  # heavy, optional: only to pick the Vendi encoder's device

        device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(seed)
    chosen = {}
    for cell, ds in groups.items():
        take = rng.choice(len(ds), size=min(int(vd["max_per_cell"]), len(ds)), replace=False)
        chosen[cell] = [ds[i] for i in sorted(take)]
    texts = [render_turns(d.turns) for ds in chosen.values() for d in ds]
    emb = cls_embeddings(texts, vd["embedder"], int(vd["batch_size"]), int(vd["max_length"]),
                         device, seed, progress)  # [n_total, H]
    out, start = {}, 0
    for cell, ds in chosen.items():
        out[cell] = (vendi_from_embeddings(emb[start:start + len(ds)]), len(ds))
        start += len(ds)
    return out


def diversity(rows: Sequence[dict[str, Any]], groups: dict[Cell, list[Dialogue]],
              cfg: dict[str, Any], out: Path) -> dict[str, float]:
    """Self-BLEU (×100, the study's scale) and Vendi per generator × class, and per class as
    the unweighted mean over generators (``analysis/<what>/mean/<class>``)."""
    if any(gen == MEAN for gen, _ in groups):
        raise InputError(f"a generator is named {MEAN!r}, the name diversity metrics give each "
                         "class's mean over generators; rename it in the corpus")
    sb = self_bleu_metrics(groups, cfg["self_bleu"], cfg["seed"], cfg["progress"])
    vs = vendi_metrics(groups, cfg["vendi"], cfg["seed"], cfg["progress"])
    mtld_by_cell: dict[Cell, list[float]] = {}
    for r in rows:
        mtld_by_cell.setdefault((r["generator"], r["label"]), []).append(r["mtld"])
    metrics, table = {}, []
    for (gen, cls), ds in groups.items():
        row = {"generator": gen, "class": cls, "n": len(ds),
               "mtld_mean": float(np.nanmean(mtld_by_cell[gen, cls])),
               "self_bleu_mean": 100 * sb[gen, cls][0], "self_bleu_sd": 100 * sb[gen, cls][1],
               "vendi": vs.get((gen, cls), (math.nan, 0))[0],
               "vendi_n": vs.get((gen, cls), (math.nan, 0))[1]}
        table.append(row)
        metrics[f"analysis/self_bleu/{gen}/{cls}"] = row["self_bleu_mean"]
        metrics[f"analysis/self_bleu_sd/{gen}/{cls}"] = row["self_bleu_sd"]
        if (gen, cls) in vs:
            metrics[f"analysis/vendi/{gen}/{cls}"] = row["vendi"]
    write_csv(table, out / "diversity.csv")
    by_class = class_means(table, bool(vs))
    for row in by_class:
        metrics[f"analysis/self_bleu/{MEAN}/{row['class']}"] = row["self_bleu"]
        if vs:
            metrics[f"analysis/vendi/{MEAN}/{row['class']}"] = row["vendi"]
    write_csv(by_class, out / "diversity_by_class.csv")
    return metrics


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


def annotation(dialogues: Sequence[Dialogue], ann: dict[str, Any], seed: int, out: Path,
               ) -> dict[str, float]:
    """Export the blind subset with the study's criteria beside it (``annotation_guide.md``);
    score returned labels against the generation labels."""
    subset = agr.select_subset(dialogues, int(ann["n_per_class"]), seed)
    agr.write_annotation_subset(subset, out / "annotation_subset.csv",
                                out / "annotation_key.csv")
    write_guide(out / GUIDE_NAME, "annotation_subset.csv", len(subset))
    if not ann["labels_path"]:
        return {}
    result = returned_labels(dialogues, ann["labels_path"])
    write_csv([{"label": c, **{f"human_{h}": int(result.confusion[i, j])
                                for j, h in enumerate(CLASSES)}}
                for i, c in enumerate(CLASSES)], out / "annotation_confusion.csv")
    return {"analysis/kappa": result.kappa, "analysis/human_agreement": result.accuracy,
            "analysis/kappa_n": float(result.n)}


def returned_labels(dialogues: Sequence[Dialogue], labels_path: str) -> agr.Agreement:
    """A returned label sheet against the corpus; a bad sheet fails with its file and line."""
    path = Path(labels_path)
    return agr.agreement(agr.read_human_labels(path), dialogues,
                         source=f"annotation.labels_path={path}")
