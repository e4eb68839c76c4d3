"""What a detect run writes: predictions.parquet, metrics, the confusion matrix, the bootstrap
stability table and figure, and the demographic-context flips of two judge runs."""

from __future__ import annotations

import logging
import math
from pathlib import Path
import pandas as pd
import pyarrow as pa

from benevaudit.errors import InputError
from benevaudit.files import read_parquet, write_atomically, write_parquet
from benevaudit.metrics.bootstrap import bootstrap_metrics, bootstrap_trigger_rates
from benevaudit.metrics.detection import detection_metrics
from benevaudit.metrics.flips import REQUIRED, flip_metrics, flip_table
from benevaudit.outputs.figures.detection import (
    bootstrap_png, confusion_png, flips_png, judges_confusion_png, trigger_png,
)
from benevaudit.outputs.spec import StabilitySpec
from benevaudit.schema import CLASSES

log = logging.getLogger(__name__)


def write_detection(frame: pd.DataFrame, out: Path, title: str, seconds: float
                    ) -> dict[str, float]:
    """``predictions.parquet``, the confusion matrix and trigger-rate figures; the metrics of
    the frame (overall, per judge, per guard category) and of its timing."""
    write_parquet(pa.Table.from_pandas(frame, preserve_index=False), out / "predictions.parquet")
    metrics = score_frame(frame)
    metrics.update(per_judge_metrics(frame))
    metrics.update(category_metrics(frame))
    metrics.update({"detect/seconds": seconds,
                    "detect/seconds_per_dialogue": seconds / max(len(frame), 1)})
    write_confusion(frame, out / "confusion_matrix.png", title)
    trigger_png(metrics, out / "trigger_rates.png", title)
    log.info("%s: TR_N=%.3f TR_OB=%.3f TR_BB=%.3f delta=%.3f invalid=%.3f (%.1f s)  run dir: %s",
             title, *(metrics.get(f"trigger/{k}", math.nan)
                      for k in ("TR_N", "TR_OB", "TR_BB", "delta_OB_BB")),
             metrics.get("detect/invalid_rate", math.nan), seconds, out)
    return metrics


def score_frame(frame: pd.DataFrame, prefix: str = "") -> dict[str, float]:
    """``binary/*``, ``trigger/*``, ``detect/invalid_rate`` and, with a three-way ``pred``,
    ``test/*`` for one predictions frame (keys prefixed by ``prefix``)."""
    flagged = [None if pd.isna(v) else bool(v) for v in frame["flagged"]]
    pred = None
    if "pred" in frame.columns and frame["pred"].notna().any():
        pred = [None if pd.isna(p) else str(p) for p in frame["pred"]]
    metrics = detection_metrics(list(frame["label"]), flagged, pred)
    return {f"{prefix}{k}": v for k, v in metrics.items()}


def category_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """``categories/<label>/<category>``: the share of each true class's dialogues in which a
    guard named that category (Llama Guard 3's S1-S14, Qwen3Guard's policy categories)."""
    if "categories" not in frame.columns:
        return {}
    out: dict[str, float] = {}
    names = sorted({c for cs in frame["categories"] for c in cs})
    for label in CLASSES:
        rows = frame[frame["label"] == label]["categories"]
        for name in names:
            out[f"categories/{label}/{name}"] = (float(sum(name in cs for cs in rows) / len(rows))
                                                 if len(rows) else math.nan)
    return out


def per_judge_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """``judges/<name>/...`` for each judge of an ensemble (columns ``pred_<name>``)."""
    out: dict[str, float] = {}
    for col in [c for c in frame.columns if c.startswith("pred_")]:
        name = col[len("pred_"):]
        sub = pd.DataFrame({"label": frame["label"], "pred": frame[col]})
        sub["flagged"] = [None if p is None or pd.isna(p) else p != "N" for p in sub["pred"]]
        out.update(score_frame(sub, f"judges/{name}/"))
    return out


def write_confusion(frame: pd.DataFrame, path: Path, title: str) -> Path | None:
    """The row-normalised three-way confusion matrix, where a ``pred`` exists; for an ensemble
    also ``confusion_judges.png``, one matrix per judge."""
    if "pred" not in frame.columns or not frame["pred"].notna().any():
        return None
    def preds(col: str) -> list[str | None]:
        return [None if pd.isna(p) else str(p) for p in frame[col]]

    judges = {c[len("pred_"):]: preds(c) for c in frame.columns if c.startswith("pred_")}
    if judges:  # an ensemble: each judge's matrix beside the ensemble's (Figure 3)
        judges_confusion_png(list(frame["label"]), {**judges, "ensemble": preds("pred")},
                             path.with_name("confusion_judges.png"), title)
    return confusion_png(list(frame["label"]), preds("pred"), path, title)


def write_bootstrap(frame: pd.DataFrame, settings: StabilitySpec, corpus_size: int | None,
                    out: Path, title: str, seed: int) -> dict[str, float]:
    """Figure 5: mean trigger rates with 95% bands over resampled matched triplets."""
    if "triplet" not in frame.columns:
        log.info("bootstrap skipped: the predictions carry no matched-triplet key")
        return {}
    if not frame["flagged"].notna().any():
        log.warning("bootstrap skipped: every dialogue's verdict is invalid")
        return {}
    if corpus_size:
        share = len(frame) / corpus_size
        if max(settings.fractions) > share + 1e-9:
            log.warning("bootstrap: sizes up to %.1f%% of the corpus are resampled from an "
                        "evaluation set of %.1f%%; the study draws from a 20%% pool "
                        "(eval.fraction=0.2), and sizes past the pool's narrow the bands",
                        100 * max(settings.fractions), 100 * share)
    table = bootstrap_trigger_rates(
        frame[["id", "label", "flagged", "triplet"]], list(settings.fractions),
        n_resamples=settings.n_resamples, seed=seed, pool_fraction=settings.pool_fraction,
        corpus_size=corpus_size)
    write_atomically(out / "bootstrap.csv", lambda tmp: table.to_csv(tmp, index=False))
    bootstrap_png(table, out / "bootstrap.png", title)
    return bootstrap_metrics(table)


def read_run_predictions(value: str, which: str) -> pd.DataFrame:
    """predictions.parquet of a run directory (or the file itself)."""
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / "predictions.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"flips.{which}={value}: no predictions.parquet there")
    return read_parquet(path, f"flips.{which}", "the predictions.parquet of a detect.py judge "
                        "run", REQUIRED)


def write_flips(with_value: str, without_value: str, out: Path) -> dict[str, float]:
    """Figure 4: N->BB and BB->N flips, wrong vs corrective, by ability group."""
    with_df = read_run_predictions(with_value, "with")
    without_df = read_run_predictions(without_value, "without")
    try:
        table = flip_table(with_df, without_df)
    except InputError as e:     # name the two files the mismatch is between
        raise InputError(f"flips.with={with_value}, flips.without={without_value}: {e}") from None
    write_atomically(out / "flips.csv", lambda tmp: table.to_csv(tmp, index=False))
    name = str(with_df["detector"].iloc[0]) if "detector" in with_df.columns and len(with_df) \
        else "judge"
    flips_png(table, out / "flips.png", f"{name}: verdict flips when demographics are shown")
    metrics = flip_metrics(table)
    log.info("flips: N->BB %s, BB->N %s  run dir: %s",
             {k: metrics.get(f"flips/N_to_BB/{k}") for k in ("wrong", "corrective")},
             {k: metrics.get(f"flips/BB_to_N/{k}") for k in ("wrong", "corrective")}, out)
    return metrics

