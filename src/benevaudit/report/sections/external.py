"""External validity: does what the synthetic corpus shows hold on human-labelled ("gold") data?

Sources, one per (run, gold set): a ``train`` run's external scores (``external/<set>/…``, its
in-distribution figure ``test/macro_f1``); an ``evaluate`` run on a gold set (``test/…``, the
in-distribution figure ``transfer/in_distribution_macro_f1``); a ``detect`` run on a gold set
(trigger rates, and ``test/…`` where the detector gives class probabilities). Detect runs on the
corpus are claimed too, only to put each detector's corpus gap beside its gap on human data.
One block per gold set; each run is its own row, since the verdict reads that run's intervals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from benevaudit.metrics.verdict import (
    PAIRS, RULE, TRANSFERS, finite, verdict,
)
from benevaudit.report.context import Context
from benevaudit.report.document import Cell, SectionOutput, Table
from benevaudit.report.gold import GOLD_KINDS, is_gold
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked
from benevaudit.report.sections.detection import label_of, name_of, scores_detection
from benevaudit.report.sections.finetune_audit import model_of, side_and_code

__all__ = ["GOLD_KINDS", "KEY", "ORDER", "TITLE", "claims", "is_gold", "render"]

KEY = "external"
TITLE = "External validity"
ORDER = 5            # before every corpus result: a reader sees first whether it holds on humans
CLASSES = ("N", "OB", "BB")
# the W&B Report's panels: train runs' external scores (a gold evaluate run's test/* would
# share a panel with every corpus run's test/*, so it stays in the offline tables)
PANELS = (re.compile(r"^external/[^/]+/(macro_f1|auroc_[A-Z]+_vs_[A-Z]+)$"),)
INTRO = ("Each classifier and detector judged on the synthetic corpus, scored on human-labelled "
         "data (one block per gold set). A corpus result that does not transfer here describes "
         "the corpus, not the task.")


class Source(NamedTuple):
    """Where one run's scores on one gold set live in its metrics."""

    run: Run
    gold: str       # the gold set's name: edos, diasafety, labelled
    prefix: str     # scores: "external/<set>/" (a train run) or "test/" (a run on the set)
    base: str       # where trigger/ and stratum/ live: "external/<set>/" or ""
    in_dist: str    # key of the in-distribution macro-F1; "" for a detector


def claims(run: Run) -> bool:
    """Gold-set runs and train runs with external scores; corpus detect runs only as the other
    side of a detector's comparison (the section renders nothing without a gold source)."""
    if run.task == "train":
        return any(k.startswith("external/") for k in run.metrics)
    if run.task == "detect":
        return scores_detection(run) or is_gold(run)
    return run.task == "evaluate" and is_gold(run)


def external_sets(run: Run) -> list[str]:
    """The gold sets a train run was scored on: the ``<set>`` of its ``external/<set>/…`` keys."""
    return sorted({k.split("/")[1] for k in run.metrics
                   if k.startswith("external/") and k.count("/") >= 2})


def sources(runs: Sequence[Run]) -> list[Source]:
    out = []
    for run in runs:
        if run.task == "train":
            out += [Source(run, name, f"external/{name}/", f"external/{name}/", "test/macro_f1")
                    for name in external_sets(run)]
        elif is_gold(run):
            in_dist = "transfer/in_distribution_macro_f1" if run.task == "evaluate" else ""
            out.append(Source(run, str(run.settings.data_kind), "test/", "", in_dist))
    return out


def describe(source: Source, by_path: dict[Path, Run]) -> list[str]:
    """[run, model, trained on, condition] of a row: enough to find the classifier again."""
    run = source.run
    if run.task == "detect":
        return [run.name, label_of(run), "—", "detector"]
    side, code = side_and_code(run)
    origin: Run | None = run
    if run.task == "evaluate":                  # trained where its checkpoint's run trained
        ckpt = run.settings.ckpt
        origin = by_path.get(Path(str(ckpt)).resolve()) if ckpt else None
    trained_on = (origin.settings.data_kind or "?") if origin is not None else "?"
    condition = "clean" if code == "—" else f"{side} {code}"
    return [run.name, marked(model_of(run, by_path), run.record), trained_on, condition]


def _value(metrics: Mapping[str, float], key: str) -> str:
    value = finite(metrics, key)
    return "n/a" if value is None else f"{value:.3f}"


def transfer_table(gold: str, rows: Sequence[Source], context: Context,
                   by_path: dict[Path, Run]) -> Table:
    """In-distribution against external macro-F1 and AUROCs, with the verdict per row; the note
    says in words which rows do not hold on human data."""
    pairs = [p for p in PAIRS if any(f"{s.prefix}auroc_{p}" in s.run.metrics for s in rows)]
    headers = ["Run", "Model", "Trained on", "Condition", "In-distribution macro-F1",
               f"Macro-F1 on {gold}", "Chance"] + [f"AUROC {p.replace('_vs_', '-vs-')}"
                                                   for p in pairs] + ["n", "Verdict"]
    body, said = [], []
    for s in rows:
        m = s.run.metrics
        here = context.cell([s.run], f"{s.prefix}macro_f1")
        home = context.cell([s.run], s.in_dist) if s.in_dist else Cell(float("nan"), n=0)
        decided = verdict(m, s.prefix)
        n = finite(m, f"{s.prefix}n")
        body.append(describe(s, by_path) + [home, here, _value(m, f"{s.prefix}chance_macro_f1")]
                    + [context.cell([s.run], f"{s.prefix}auroc_{p}") for p in pairs]
                    + ["n/a" if n is None else str(int(n)), decided])
        if decided != TRANSFERS:
            said.append(f"{s.run.name}: in distribution {home.text()}; on {gold} "
                        f"{here.text()}: {decided}.")
    note = " ".join([RULE, "AUROCs one class against another from the predicted "
                     "probabilities; intervals as the run wrote them.", *said])
    return Table(f"{gold}: transfer of classifiers to human-labelled data", headers, body, note)


def confusion_table(source: Source) -> Table | None:
    """The row-normalised confusion on the gold set and each true class's flag rate; None when
    the run wrote no confusion (a detector without class probabilities)."""
    m, p = source.run.metrics, source.prefix
    written = [c for c in CLASSES if any(f"{p}confusion_{c}_to_{q}" in m for q in CLASSES)]
    # a class the gold set does not have (DiaSafety's BB) is written as a row of zeros
    absent = [c for c in written
              if sum(finite(m, f"{p}confusion_{c}_to_{q}") or 0.0 for q in CLASSES) == 0.0]
    rows = [[c] + [_value(m, f"{p}confusion_{c}_to_{q}") for q in CLASSES]
            + [_value(m, f"{source.base}trigger/TR_{c}")] for c in written if c not in absent]
    if not rows:
        return None
    missing = (f" Not in the gold set, so not shown: {', '.join(absent)}." if absent else "")
    return Table(f"{source.gold}: confusion of {source.run.name} (row-normalised)",
                 ["True class", "→ N", "→ OB", "→ BB", "Flagged (TR)"], rows,
                 note="Rows: true class; columns: predicted class; a row sums to 1 and its "
                 "diagonal cell is the class's recall. Flagged: predicted OB or BB." + missing)


def strata_table(gold: str, rows: Sequence[Source]) -> Table | None:
    """Trigger rate and mean class probabilities per stratum of the gold set, per run."""
    body = []
    for s in rows:
        start = f"{s.base}stratum/"
        values = sorted({k[len(start):].rpartition("/")[0] for k in s.run.metrics
                         if k.startswith(start)} - {""})
        for v in values:
            m, key = s.run.metrics, f"{start}{v}/"
            n = finite(m, f"{key}n")
            body.append([s.run.name, v, "n/a" if n is None else str(int(n)),
                         _value(m, f"{key}trigger_rate")]
                        + [_value(m, f"{key}mean_p_{c}") for c in CLASSES])
    if not body:
        return None
    return Table(f"{gold}: strata", ["Run", "Stratum", "n", "Trigger rate", "Mean p_N",
                                     "Mean p_OB", "Mean p_BB"], body,
                 note="Trigger rate: share flagged (predicted OB or BB) in the stratum.")


def detector_table(gold: str, rows: Sequence[Source], corpus: Sequence[Run],
                   context: Context) -> Table:
    """Each detector's trigger rates on the gold set, its OB−BB gap there beside its gap on the
    corpus (its non-gold runs in this report), and flagged-class precision/recall/F1 where the
    set has no BB class (the gap is undefined there)."""
    has_bb = any(finite(s.run.metrics, "trigger/TR_BB") is not None for s in rows)
    rates = ("N", "OB", "BB") if has_bb else ("N", "OB")
    headers = ["Run", "Detector"] + [f"TR_{c}" for c in rates] + (
        [f"Δ OB−BB on {gold}"] if has_bb else []) + ["Δ OB−BB on the corpus"] + (
        [] if has_bb else ["Precision", "Recall", "F1"])
    body, said = [], []
    for s in rows:
        label, name = label_of(s.run), name_of(s.run)
        paired = [r for r in corpus if name_of(r) == name
                  and finite(r.metrics, "trigger/delta_OB_BB") is not None]
        there: Cell | str = context.cell(paired, "trigger/delta_OB_BB") if paired else "—"
        here = context.cell([s.run], "trigger/delta_OB_BB")
        body.append([s.run.name, label] + [context.cell([s.run], f"trigger/TR_{c}")
                                           for c in rates]
                    + ([here] if has_bb else []) + [there]
                    + ([] if has_bb else [context.cell([s.run], f"binary/{k}")
                                          for k in ("precision", "recall", "f1")]))
        if has_bb and isinstance(there, Cell) and there.mean > 0 and here.low <= 0:
            said.append(f"{label}: Δ on the corpus {there.text()}; on {gold} {here.text()}: "
                        "the gap is not confirmed on human data.")
    note = ("Δ = TR_OB − TR_BB. On the corpus: mean ± std over the detector's runs on non-gold "
            "data in this report (n), — when there are none.")
    if not has_bb:
        note += (f" {gold} has no benevolent-bias class: TR_BB and Δ are undefined on it; "
                 "precision, recall and F1 are of the flagged (unsafe) class.")
    return Table(f"{gold}: detectors and guards on human-labelled data", headers, body,
                 " ".join([note, *said]))


def gold_block(gold: str, mine: Sequence[Source], corpus: Sequence[Run], context: Context,
               by_path: dict[Path, Run]) -> list[Table]:
    """The tables of one gold set: transfer, confusions, strata, detectors."""
    classifiers = [s for s in mine if s.run.task != "detect"
                   or f"{s.prefix}macro_f1" in s.run.metrics]
    detectors = [s for s in mine if s.run.task == "detect"]
    tables = [transfer_table(gold, classifiers, context, by_path)] if classifiers else []
    tables += [t for t in map(confusion_table, classifiers) if t is not None]
    strata = strata_table(gold, mine)
    tables += [strata] if strata is not None else []
    if detectors:
        tables.append(detector_table(gold, detectors, corpus, context))
    return tables


def _gold_order(gold: str) -> tuple[int, str]:
    """The known sets in GOLD_KINDS order (the one with all three classes first), then others."""
    return (GOLD_KINDS.index(gold) if gold in GOLD_KINDS else len(GOLD_KINDS), gold)


def render(runs: Sequence[Run], context: Context) -> SectionOutput | None:
    found = sources(runs)
    if not found:
        return None                         # only corpus detect runs: nothing external to show
    by_path = {r.path.resolve(): r for r in runs}
    corpus = [r for r in runs if r.task == "detect" and not is_gold(r)]
    out = SectionOutput(KEY, TITLE, intro=INTRO)
    for gold in sorted({s.gold for s in found}, key=_gold_order):
        out.tables += gold_block(gold, [s for s in found if s.gold == gold], corpus, context,
                                 by_path)
    return out
