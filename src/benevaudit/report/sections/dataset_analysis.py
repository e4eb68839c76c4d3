"""Dataset analysis (``analyze.py`` runs): how the classes differ before any model sees them.

Marker effects are Cohen's d of each biased class against the reference class, with a 95%
bootstrap interval over the run's dialogues (``markers.csv``, one row per dialogue); diversity is
Self-BLEU (mean ± sd over its seeds, as the run reports it) and Vendi per generator × class.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from benevaudit.files import read_csv
from benevaudit.metrics.linguistic import MARKER_SOURCES
from benevaudit.metrics.rates import ratio
from benevaudit.metrics.resample import resample
from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import Cell, SectionOutput, Table
from benevaudit.report.intervals import percentile_interval
from benevaudit.report.runs import Run

KEY = "dataset_analysis"
TITLE = "Dataset analysis"
ORDER = 20
EFFECT = re.compile(r"^analysis/d_(?P<cls>[^/]+)_vs_(?P<ref>[^/]+)/(?P<marker>.+)$")
DIVERSITY = re.compile(r"^analysis/(?P<what>self_bleu|vendi)/(?P<gen>[^/]+)/(?P<cls>[^/]+)$")
PANELS = (EFFECT,)                 # the W&B Report's panels
FIGURES = ("marker_effects*.png", "mtld_by_class*.png", "*.png")


def claims(run: Run) -> bool:
    return run.task == "analyze" or any(k.startswith("analysis/") for k in run.metrics)


def d_replicates(frame: pd.DataFrame, reference: str, n_resamples: int, seed: int
                 ) -> dict[tuple[str, str], np.ndarray]:
    """{(class, marker): [R] Cohen's d vs ``reference``}: dialogues resampled, pooled SD."""
    if "label" not in frame.columns:
        return {}
    markers = [c for c in frame.columns if c not in ("id", "label", "generator", "role")
               and pd.api.types.is_numeric_dtype(frame[c])]
    classes = [c for c in pd.unique(frame["label"]) if isinstance(c, str)]
    blocks = []
    for cls in classes:
        member = (frame["label"] == cls).to_numpy()[:, None]
        x = frame[markers].to_numpy(dtype=float)                      # [n, M]
        ok = member & np.isfinite(x)
        x0 = np.where(ok, x, 0.0)
        blocks += [ok.astype(float), x0, x0 * x0]                      # n, Σx, Σx² per marker
    sums = resample(np.arange(len(frame)), np.concatenate(blocks, axis=1), n_resamples, seed)
    m = len(markers)
    stats = {cls: sums[:, 3 * m * i:3 * m * (i + 1)].reshape(-1, 3, m) for i, cls in enumerate(classes)}
    if reference not in stats:
        return {}
    out = {}
    n2, s2, ss2 = (stats[reference][:, j] for j in range(3))
    var2 = ratio(ss2 - ratio(s2 * s2, n2), n2 - 1)
    for cls in classes:
        if cls == reference:
            continue
        n1, s1, ss1 = (stats[cls][:, j] for j in range(3))
        var1 = ratio(ss1 - ratio(s1 * s1, n1), n1 - 1)
        pooled = ratio((n1 - 1) * var1 + (n2 - 1) * var2, n1 + n2 - 2)
        d = ratio(ratio(s1, n1) - ratio(s2, n2), np.sqrt(np.maximum(pooled, 0)))
        for j, marker in enumerate(markers):
            out[(cls, marker)] = d[:, j]
    return out


def effects_table(run: Run, context: Context) -> Table | None:
    effects: dict[tuple[str, str], float] = {}
    reference = "N"
    for name, value in run.metrics.items():
        if (m := EFFECT.match(name)):
            effects[(m["cls"], m["marker"])] = value
            reference = m["ref"]
    if not effects:
        return None
    reps: dict = {}
    path = run.path / "markers.csv"
    if context.n_resamples and path.is_file():
        reps = d_replicates(read_csv(path, None, (), "the markers.csv an analyze run wrote"),
                            reference, context.n_resamples, context.seed)
    classes = sorted({c for c, _ in effects})
    markers = list(dict.fromkeys(m for _, m in effects))
    rows = []
    for marker in markers:
        row: list[object] = [marker, MARKER_SOURCES.get(marker, "unknown")]
        for cls in classes:
            low, high = (percentile_interval(reps[(cls, marker)]) if (cls, marker) in reps
                         else (float("nan"), float("nan")))
            row.append(Cell(effects.get((cls, marker), float("nan")), low=low, high=high))
        rows.append(row)
    return Table(f"Marker effects of {run.name}: Cohen's d vs {reference}",
                 ["marker", "source", *[f"d {c} vs {reference}" for c in classes]], rows,
                 note="[95% bootstrap interval over the run's dialogues (markers.csv)]; source: "
                      "named by the study, or benevaudit's own choice after the literature "
                      "given")


def diversity_table(runs: Sequence[Run], context: Context) -> Table | None:
    cells: dict[tuple[str, str], dict[str, list[Run]]] = {}
    for run in runs:
        for name in run.metrics:
            if (m := DIVERSITY.match(name)):
                cells.setdefault((m["gen"], m["cls"]), {}).setdefault(m["what"], []).append(run)
    if not cells:
        return None
    rows = []
    for (gen, cls), by in sorted(cells.items()):
        bleu = context.cell(by.get("self_bleu", []), f"analysis/self_bleu/{gen}/{cls}")
        vendi = context.cell(by.get("vendi", []), f"analysis/vendi/{gen}/{cls}")
        rows.append([gen, cls, bleu, vendi])
    return Table("Diversity per generator × class", ["generator", "class", "Self-BLEU", "Vendi"],
                 rows, note="Across analyze runs: mean ± std (n). Self-BLEU's own spread over "
                 "its seeds is in diversity.csv.")


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    out = SectionOutput(KEY, TITLE)
    for members in by_condition(runs, lambda r: (r.condition,)).values():
        table = effects_table(members[0], context)
        if table is not None:
            out.tables.append(table)
    diversity = diversity_table(runs, context)
    if diversity is not None:
        out.tables.append(diversity)
    out.figures = figures_of(runs, FIGURES, lambda r: f"analysis of {r.choices.get('data', 'corpus')}")
    return out
