"""Human validation as CoBia's paper reports it, from people's labels of rated rows.

- Fleiss' κ among the annotators of each prompt group (the paper reports 0.54 and 0.55 for
  its two groups), on the outputs all of that group's annotators labelled; the groups'
  annotators differ, so their labels are not pooled. A group is a judge prompt (``bias``,
  ``nli``: the question its annotators answered, as in the paper) where the labels name each
  annotator's group, else the method of the labelled output (``grouping=method``);
- each annotator's Cohen's κ with each judge, averaged over annotators (the paper: 0.10 with
  Granite), per prompt group and over all labelled rows; beside the majority-vote comparison
  of :func:`~benevaudit.probes.cobia.scoring.human_agreement`;
- the disagreement table: outputs two of the three scoring judges flag alike and the third
  does not, and whether the people's majority sided with the odd judge or with the pair.
"""

from __future__ import annotations

from collections.abc import Sequence
import pandas as pd

from benevaudit.metrics.agreement import fleiss_kappa, mean_annotator_kappa, odd_one_out
from benevaudit.probes.cobia.human import Key
from benevaudit.probes.cobia.scoring import BINARY, Row, binary_labels, rating_table

TABLE_COLUMNS = ("id", "method", "odd_judge", "odd_verdict", "biased_votes", "annotators",
                 "humans_sided_with")


def name(key: Key) -> str:
    return f"{key[0]}/{key[1]}"


def human_validation(rows: Sequence[Row], kinds: dict[str, str],
                     notes: dict[Key, dict[str, str]], groups: dict[str, str] | None = None
                     ) -> tuple[dict[str, float], pd.DataFrame]:
    """The metrics above and the disagreement table (rows: :data:`TABLE_COLUMNS`).
    ``groups``: each annotator's prompt group; None: the labelled output's method."""
    keyed = {(r["id"], r["method"]): r for r in rows}
    shared = {k: v for k, v in notes.items() if k in keyed}
    scoring = [j for j, kind in kinds.items() if kind != "refusal"]
    verdicts = {j: {name(k): binary_labels([keyed[k]], j, kinds[j])[0] for k in shared}
                for j in scoring}

    def group_of(key: Key, annotator: str) -> str:
        return key[1] if groups is None else groups.get(annotator, "")

    out: dict[str, float] = {}
    named = {group_of(k, a) for k, v in shared.items() for a in v}
    for group in [*sorted(named), None]:
        part = {k: {a: x for a, x in v.items() if group is None or group_of(k, a) == group}
                for k, v in shared.items()}
        out.update(group_metrics({k: v for k, v in part.items() if v}, verdicts, group))
    flags, table = judge_flags(verdicts), pd.DataFrame(columns=list(TABLE_COLUMNS))
    if len(flags) == 3 and shared:
        people = {name(k): [x == BINARY[0] for x in v.values()] for k, v in shared.items()}
        found = odd_one_out(flags, people)
        by_name = {name(k): k for k in shared}
        table = pd.DataFrame([(*by_name[o.item], o.odd, BINARY[not o.odd_flag], o.biased_votes,
                               o.annotators, o.side) for o in found], columns=list(TABLE_COLUMNS))
        for j in flags:
            mine = table[table["odd_judge"] == j]
            out[f"cobia/disagreement/{j}/items"] = float(len(mine))
            for side in ("odd", "pair"):
                out[f"cobia/disagreement/{j}/humans_with_{side}"] = float(
                    (mine["humans_sided_with"] == side).sum())
    return out, table


def group_metrics(part: dict[Key, dict[str, str]], verdicts: dict[str, dict[str, str | None]],
                  group: str | None) -> dict[str, float]:
    """One prompt group's metrics (``group`` None: every labelled row, no Fleiss' κ)."""
    suffix = "" if group is None else f"/{group}"
    out = {f"cobia/human/items{suffix}": float(len(part))}
    annotators = sorted(set().union(*part.values())) if part else []
    if group is not None and len(annotators) >= 2:
        complete = [[v[a] for a in annotators] for v in part.values() if len(v) == len(annotators)]
        if complete:
            out[f"cobia/fleiss_kappa/humans{suffix}"] = fleiss_kappa(rating_table(complete))
    marks = {a: {name(k): v[a] for k, v in part.items() if a in v} for a in annotators}
    for j, judge in verdicts.items():
        mean, _ = mean_annotator_kappa(marks, judge, BINARY)
        out[f"cobia/mean_cohen_kappa/{j}__annotators{suffix}"] = mean
    return out


def judge_flags(verdicts: dict[str, dict[str, str | None]]) -> dict[str, dict[str, bool | None]]:
    return {j: {i: None if v is None else v == BINARY[0] for i, v in labels.items()}
            for j, labels in verdicts.items()}

