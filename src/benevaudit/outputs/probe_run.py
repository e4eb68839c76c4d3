"""What detect.py adds when it scores a probe run's replies (``data=probe_run``): each reply's
task, turn, group and the probe judges' verdicts as columns of ``predictions.parquet``, the
detector's own verdict on the reply, and the benevolent bias the probe's judge cannot see.

The reply's flag (``reply_flagged``) is the detector's verdict on the reply's own unit where
it reads one unit per agent turn (an earlier turn, such as CoBia's fabricated history or
FairMT's earlier replies, is not the reply), else its verdict on the whole record.

Metrics, per task and turn (``probe_run/<task>/turn_<k>/``; rates with Wilson
``_ci_low``/``_ci_high``, invalid verdicts left out):
- ``n``: replies scored;
- ``flagged``: the share of replies the detector flags;
- ``bb``: the share it classes BB (detectors with a three-way prediction: judges, the
  fine-tuned classifier);
- ``unseen_bb/<judge>``: among the replies the probe's judge called not biased
  (``n_unbiased/<judge>`` of them), the share the detector classes BB: the benevolent bias that
  judge cannot see; ``unseen_flagged/<judge>`` the share it flags at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from benevaudit.metrics.rates import share
from benevaudit.metrics.wilson import wilson_interval
from benevaudit.schema import Dialogue

PREFIX = "probe_run"
JUDGE = "judge_"        # the column prefix of a probe judge's verdict


def reply_flag(row: Any, reply_turn: int) -> bool | None:
    """The detector's flag on the reply: its unit's where units are agent turns."""
    turns, flags = list(row["unit_turns"]), list(row["unit_flags"])
    if reply_turn in turns:
        flag = flags[turns.index(reply_turn)]
        return None if flag is None or flag != flag else bool(flag)
    return None if pd.isna(row["flagged"]) else bool(row["flagged"])


def probe_columns(frame: pd.DataFrame, dialogues: Sequence[Dialogue]) -> pd.DataFrame:
    """``frame`` (one row per reply, in ``dialogues`` order) with ``probe``, ``task``, ``turn``,
    ``group``, ``reply_flagged`` and ``judge_<name>`` (True biased, False not, None invalid)."""
    out = frame.copy()
    metas = [d.meta for d in dialogues]
    for key in ("probe", "task", "turn", "group"):
        out[key] = [m[key] for m in metas]
    out["reply_flagged"] = pd.array([reply_flag(row, m["reply_turn"])
                                     for (_, row), m in zip(out.iterrows(), metas, strict=True)],
                                    dtype="boolean")
    for judge in sorted({j for m in metas for j in m["judges"]}):
        out[f"{JUDGE}{judge}"] = pd.array([m["judges"].get(judge) for m in metas],
                                          dtype="boolean")
    return out


def put_rate(metrics: dict[str, float], name: str, hits: pd.Series) -> None:
    """``name``: the share of True among the valid (non-missing) entries, with Wilson bounds."""
    valid = hits.dropna().astype(bool)
    k, n = int(valid.sum()), len(valid)
    low, high = wilson_interval(k, n)
    metrics[name] = float(share(k, n))
    metrics[f"{name}_ci_low"], metrics[f"{name}_ci_high"] = low, high


def probe_run_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """``probe_run/<task>/turn_<k>/*`` of a frame from :func:`probe_columns`."""
    three_way = "pred" in frame.columns and frame["pred"].notna().any()
    judges = [c for c in frame.columns if c.startswith(JUDGE)]
    metrics: dict[str, float] = {}
    for (task, turn), part in frame.groupby(["task", "turn"], sort=True):
        head = f"{PREFIX}/{task}/turn_{turn}"
        metrics[f"{head}/n"] = float(len(part))
        put_rate(metrics, f"{head}/flagged", part["reply_flagged"])
        # the three-way class is BB (None where the prediction is invalid)
        is_bb = (part["pred"].map(lambda p: None if pd.isna(p) else p == "BB") if three_way
                 else None)
        if is_bb is not None:
            put_rate(metrics, f"{head}/bb", is_bb)
        for column in judges:
            name = column[len(JUDGE):]
            unbiased = part[column].eq(False).fillna(False).astype(bool)   # not biased, valid
            metrics[f"{head}/n_unbiased/{name}"] = float(unbiased.sum())
            put_rate(metrics, f"{head}/unseen_flagged/{name}", part["reply_flagged"][unbiased])
            if is_bb is not None:
                put_rate(metrics, f"{head}/unseen_bb/{name}", is_bb[unbiased])
    return metrics


def unseen_summary(metrics: dict[str, float]) -> str:
    """One log line: the largest unseen-BB share, or that none could be measured."""
    found = {k: v for k, v in metrics.items() if "/unseen_bb/" in k
             and not k.endswith(("_ci_low", "_ci_high")) and not math.isnan(v)}
    if not found:
        return "no unseen-BB share (the detector makes no three-way prediction, or no judge)"
    name = max(found, key=found.__getitem__)
    return f"largest unseen-BB share {found[name]:.3f} ({name})"
