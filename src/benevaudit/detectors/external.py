"""``detector=external``: predictions made elsewhere, checked and scored as given, or decided
again from a detect run's unit verdicts under another aggregation rule."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from benevaudit.detectors.base import Detector, UnitVerdict
from benevaudit.detectors.registry import DETECTORS, BuildContext, DetectorKind
from benevaudit.detectors.spec import ExternalSpec, PredictionsSpec
from benevaudit.detectors.units import Aggregation, Unit, aggregate
from benevaudit.errors import ConfigError, InputError
from benevaudit.files import describe_columns, read_csv, read_parquet
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import CLASSES, Dialogue


log = logging.getLogger(__name__)


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


def read_external(path_value: str | None, aggregation: Aggregation | None,
                  threshold: float) -> pd.DataFrame:
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
    _check_unique(frame["id"], path)
    for i, label in enumerate(frame["label"]):
        if label not in CLASSES:
            raise ConfigError(f"{path}: row {i + 2 if path.suffix == '.csv' else i}, field "
                              f"'label': expected one of {list(CLASSES)}, got {label!r}")
    if "pred" in frame.columns and "flagged" in frame.columns and frame["pred"].isna().all():
        frame = frame.drop(columns="pred")  # a guard's or classifier's run: no three-way pred
    if aggregation:
        return _reaggregate(frame, path, aggregation, threshold)
    frame = _as_given(frame, path)
    log.info("scoring %d external predictions from %s", len(frame), path)
    return frame


def _check_unique(ids: pd.Series, path: Path) -> None:
    """One row per dialogue: scored as given, a repeated id would count its dialogue twice."""
    repeated = ids.duplicated().to_numpy()
    if repeated.any():
        skip = 2 if path.suffix == ".csv" else 0      # a CSV's header is line 1
        second = int(repeated.argmax())
        first = int((ids == ids.iloc[second]).to_numpy().argmax())
        raise InputError(f"{path}: row {second + skip}, field 'id': {ids.iloc[second]!r} appears "
                         f"more than once (first at row {first + skip}); expected one row per "
                         "dialogue")


def _as_given(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``flagged`` from ``pred`` where the file has one, else from its ``flagged`` column."""
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
    return frame


def _reaggregate(frame: pd.DataFrame, path: Path, rule: Aggregation,
                 threshold: float) -> pd.DataFrame:
    """``flagged`` decided again from each row's unit verdicts under ``rule``."""
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


class ExternalDetector(Detector):
    """Decisions read from ``predictions.path`` instead of made from the corpus."""

    unit = "dialogue"

    def __init__(self, name: str, predictions: PredictionsSpec) -> None:
        self.name, self.path, self.threshold = name, predictions.path, predictions.threshold
        self.rule = predictions.aggregation

    def predictions(self, dialogues: Sequence[Dialogue] = (),
                    progress: bool = False) -> pd.DataFrame:
        """The file's rows, checked (the dialogues are not read: the file holds the labels)."""
        frame = read_external(self.path, self.rule, self.threshold)
        frame["detector"] = self.name
        return frame

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        raise ConfigError("detector=external reads decisions from predictions.path; it scores "
                          "no dialogue units")


def external_detector(name: str, predictions: PredictionsSpec | None) -> ExternalDetector:
    """``detector=external``: the ``predictions`` block says where its decisions are, and how
    they are read."""
    if predictions is None:
        raise ConfigError("detector=external needs the predictions block "
                          "(predictions.path=<file.parquet | file.csv>)")
    return ExternalDetector(name, predictions)


def build_external(spec: ExternalSpec, context: BuildContext) -> ExternalDetector:
    return external_detector(spec.name, context.predictions)


def record_external(spec: ExternalSpec, context: BuildContext, dialogues: Sequence[Dialogue],
                    request_log: RequestLog) -> None:
    """No request: the file is read (so a bad one fails as in a real run)."""
    build_external(spec, context).predictions()
    log.info("detector=external reads predictions made elsewhere: no model requests")


KIND = DetectorKind(build_external, record_external, reads_corpus=False)
DETECTORS.add("external", ExternalSpec, KIND)
