"""Where detect.py's dialogues and decisions come from: the evaluation set, the audit's own
fine-tuned classifier, and predictions made elsewhere (``detector=external``)."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from benevaudit.detectors import DialogueResult
from benevaudit.errors import ConfigError, InputError
from benevaudit.files import describe_columns, read_csv, read_parquet
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.splits import _rank, assign_splits

log = logging.getLogger(__name__)


def evaluation_set(dialogues: Sequence[Dialogue], fraction: float, limit: int | None,
                   seed: int) -> list[Dialogue]:
    """A seeded, class-balanced ``fraction`` of the corpus, cut by matched triplet.

    It is the last ``fraction`` of each label-composition bucket in train.py's seeded triplet
    order, so ``fraction=0.1`` with train.py's seed is exactly train.py's test split and the
    fine-tuned classifier is scored on dialogues it never saw. ``limit`` keeps N dialogues
    taken round-robin over the classes, in that same seeded order.
    """
    if not 0 < fraction <= 1:
        raise ConfigError(f"eval.fraction must be in (0, 1], got {fraction}")
    if fraction >= 1:
        chosen = list(dialogues)
    else:
        split = assign_splits(dialogues, seed, (1 - fraction, 0.0, fraction))
        chosen = [d for d in split if d.split == "test"]
    if not chosen:
        raise ConfigError(f"eval.fraction={fraction} of {len(dialogues)} dialogues is empty; "
                          "raise eval.fraction or use a larger corpus")
    if limit is None:
        return chosen
    if limit < 1:
        raise ConfigError(f"eval.limit must be a positive number of dialogues, got {limit}")
    queues: dict[str, list[Dialogue]] = defaultdict(list)
    for d in sorted(chosen, key=lambda d: (_rank(seed, d.triplet_key), d.id)):
        queues[str(d.label)].append(d)
    order = [c for c in CLASSES if queues[c]] + sorted(k for k in queues if k not in CLASSES)
    picked: list[Dialogue] = []
    while len(picked) < limit and any(queues[c] for c in order):
        for c in order:
            if queues[c] and len(picked) < limit:
                picked.append(queues[c].pop(0))
    return picked


def _run_settings(run: Path | None) -> dict[str, Any]:
    """The training run's model settings (max_length, head_tokens), when its config is there."""
    if run is None or not (run / ".hydra" / "config.yaml").is_file():
        return {}
    import yaml

    cfg = yaml.safe_load((run / ".hydra" / "config.yaml").read_text()) or {}
    return {k: v for k, v in (cfg.get("model") or {}).items() if k in ("max_length", "head_tokens")}


def detect_finetuned(ckpt: str | None, spec: dict[str, Any], dialogues: Sequence[Dialogue],
                     seed: int) -> list[DialogueResult]:
    """The audit's classifier on the evaluation set: ``pred`` and class probabilities per
    dialogue (one whole-dialogue unit); flagged when pred is OB or BB."""
    from benevaudit.audit.datamodule import DialogueDataModule
    from benevaudit.audit.evaluation import evaluate_classifier
    from benevaudit.audit.checkpoints import load_frozen, locate

    if not ckpt:
        raise ConfigError("detector=finetuned needs ckpt=<train run directory | its model/ "
                          "directory | a .ckpt file>")
    weights, run = locate(str(ckpt))
    settings = {"max_length": 512, "head_tokens": 128, **_run_settings(run)}
    for key in ("max_length", "head_tokens"):
        if spec.get(key) is not None:
            settings[key] = int(spec[key])
    model, tokenizer = load_frozen(weights)
    dm = DialogueDataModule({"test": list(dialogues)}, tokenizer, int(settings["max_length"]),
                            int(settings["head_tokens"]), eval_batch_size=int(spec.get("batch_size", 32)),
                            seed=seed)
    dm.setup()
    result = evaluate_classifier(model, dm.eval_dataloader("test"), dialogues, "test")
    out = []
    for d, probs in zip(dialogues, result.probs, strict=True):
        p = {c: float(v) for c, v in zip(CLASSES, probs, strict=True)}
        pred = max(CLASSES, key=lambda c: p[c])
        out.append(DialogueResult(id=d.id, flagged=pred != "N", unit_scores=[p["OB"] + p["BB"]],
                                  unit_flags=[pred != "N"], unit_turns=[-1], invalid_raw=[],
                                  pred=pred, probs=p))
    return out


# the documented forms only: true/false in any case, or 1/0 ("n" or "no" would read too easily
# as the class N)
TRUE = {"true", "1"}
FALSE = {"false", "0"}


def _flag(value: Any, row: int, path: Path) -> bool | None:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None  # pd.NA: a nullable boolean column, as detect.py writes flagged
    text = str(value).strip().lower()
    if text in ("1.0",):
        return True
    if text in ("0.0",):
        return False
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise ConfigError(f"{path}: row {row}, field 'flagged': expected true/false (any case) "
                      f"or 1/0, got {value!r}")


EXTERNAL = "predictions with columns id, label and pred or flagged"


def read_external(path_value: str | None, aggregation: str | None = None,
                  threshold: float = 0.5) -> pd.DataFrame:
    """Predictions made elsewhere, checked: columns id, label and pred or flagged.

    Every row is scored as given. With ``pred`` (N/OB/BB; empty = invalid) flagged means
    pred in {OB, BB}; with only ``flagged`` (or a ``pred`` column with no value, as a guard's
    run writes), true/false in any case or 1/0 (empty = invalid).

    ``aggregation`` (any | max | mean | first) instead decides each dialogue again from its
    ``unit_flags`` and ``unit_scores``, as a detect.py run's ``predictions.parquet`` keeps
    them: another rule without rerunning the model.
    """
    if not path_value:
        raise ConfigError("detector=external needs predictions.path=<file.parquet | file.csv>")
    path = Path(str(path_value)).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"predictions.path={path_value}: no such file")
    if path.suffix == ".parquet":
        frame = read_parquet(path, "predictions.path", EXTERNAL)
    elif path.suffix == ".csv":
        frame = read_csv(path, "predictions.path", (), EXTERNAL, dtype={
            "id": str, "label": str, "pred": str, "flagged": str},
            keep_default_na=False, na_values=[""])
    else:
        raise ConfigError(f"predictions.path={path_value}: expected a .parquet or .csv file")
    missing = [c for c in ("id", "label") if c not in frame.columns]
    if missing or not ({"pred", "flagged"} & set(frame.columns)):
        raise ConfigError(f"{path}: needs columns id, label and pred or flagged; "
                          f"{describe_columns(frame.columns)}")
    if frame.empty:
        raise InputError(f"predictions.path={path}: no rows (expected {EXTERNAL})")
    frame = frame.copy()
    frame["id"] = frame["id"].astype(str)
    repeated = frame["id"][frame["id"].duplicated()]
    if len(repeated):
        row = int(repeated.index[0]) + (2 if path.suffix == ".csv" else 0)
        raise InputError(f"{path}: row {row}, field 'id': {repeated.iloc[0]!r} appears more than "
                         "once; expected one row per dialogue")
    for i, label in enumerate(frame["label"]):
        if label not in CLASSES:
            raise ConfigError(f"{path}: row {i + 2 if path.suffix == '.csv' else i}, field "
                              f"'label': expected one of {list(CLASSES)}, got {label!r}")
    if "pred" in frame.columns and "flagged" in frame.columns and frame["pred"].isna().all():
        frame = frame.drop(columns="pred")  # a guard's or classifier's run: no three-way pred
    if aggregation:
        return _reaggregate(frame, path, aggregation, threshold)
    if "pred" in frame.columns:
        preds = [None if (p is None or p != p or p == "") else str(p).strip() for p in frame["pred"]]
        for i, p in enumerate(preds):
            if p is not None and p not in CLASSES:
                raise ConfigError(f"{path}: row {i + 2 if path.suffix == '.csv' else i}, field "
                                  f"'pred': expected one of {list(CLASSES)} or empty, got {p!r}")
        frame["pred"] = preds
        if "flagged" in frame.columns:
            log.warning("%s has both pred and flagged: flagged is derived from pred "
                        "(pred in OB, BB) and the file's flagged column is ignored", path)
        frame["flagged"] = [None if p is None else p != "N" for p in preds]
    else:
        frame["flagged"] = [_flag(v, i + 2 if path.suffix == ".csv" else i, path)
                            for i, v in enumerate(frame["flagged"])]
    log.info("scoring %d external predictions from %s", len(frame), path)
    return frame


def _reaggregate(frame: pd.DataFrame, path: Path, rule: str, threshold: float) -> pd.DataFrame:
    """``flagged`` decided again from each row's unit verdicts under ``rule``."""
    from benevaudit.detectors import AGGREGATIONS, aggregate

    if rule not in AGGREGATIONS:
        raise ConfigError(f"predictions.aggregation={rule!r}; valid: {list(AGGREGATIONS)}")
    missing = [c for c in ("unit_flags", "unit_scores") if c not in frame.columns]
    if missing:
        raise ConfigError(f"{path}: predictions.aggregation needs the unit_flags and unit_scores "
                          f"columns of a detect.py run's predictions.parquet; it lacks {missing}")
    flagged = []
    for flags, scores in zip(frame["unit_flags"], frame["unit_scores"], strict=True):
        flags = [None if f is None or f != f else bool(f) for f in flags]
        flagged.append(aggregate(flags, [float(x) for x in scores], rule, threshold))
    frame["flagged"] = flagged
    if "pred" in frame.columns:  # a judge's three-way pred no longer matches the decision
        frame = frame.drop(columns="pred")
    log.info("re-deciding %d dialogues from %s with aggregation=%s (threshold %s)", len(frame),
             path, rule, threshold)
    return frame
