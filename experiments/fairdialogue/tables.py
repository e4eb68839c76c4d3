"""Print FairDialogue's Table 2 and Table 3 layouts from run directories alone.

    python experiments/fairdialogue/tables.py <run or sweep dir> [more dirs] [--out DIR]
        [--definition paper|released] [--similarity prag|serp]

Table 2: GUS (decision tasks) and SNSR, SNSV (recommendation tasks) per model × attribute,
with the averages over tasks; ``--definition paper`` (default) reads eq. 1–4's values,
``released`` the authors' released scoring (``.../released/gus`` and
``.../released/<similarity>/snsr|snsv``, PRAG unless ``--similarity serp``). Table 3: RST
and ANR per group under negative feedback. Each run directory is found by its
``metrics.json``; the model is ``target.name`` in its ``.hydra/config.yaml``. Runs of the same
model and cell are averaged.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import pandas as pd
import yaml

# the metric names and their reading are the report section's, so the two tables always agree
from benevaudit.report.sections.fairdialogue import (
    DEFINITIONS,
    FEEDBACK,
    SIMILARITIES,
    score_of,
)
DECISION_TASKS = ("award", "interview", "assignment")
RECOMMENDATION_TASKS = ("course", "entertainment", "occupation")


def runs(paths: list[str]) -> list[tuple[str, dict[str, float]]]:
    """(model, metrics) of every run directory under the given paths."""
    found = []
    for root in paths:
        for file in sorted(Path(root).rglob("metrics.json")):
            config = file.parent / ".hydra" / "config.yaml"
            cfg = yaml.safe_load(config.read_text()) if config.exists() else {}
            model = str((cfg.get("target") or {}).get("name", file.parent.name))
            if (cfg.get("probe") or {}).get("mode") == "audio":
                model = f"{model} (heard)"      # as the report marks it; never pooled with text
            found.append((model, json.loads(file.read_text())))
    return found


def mean(values: list[float]) -> float:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def table2(found: list[tuple[str, dict[str, float]]], definition: str = "paper",
           similarity: str = "prag") -> pd.DataFrame:
    if definition not in DEFINITIONS or similarity not in SIMILARITIES:
        raise ValueError(f"definition must be one of {list(DEFINITIONS)} and similarity one of "
                         f"{list(SIMILARITIES)}, got {definition!r} and {similarity!r}")
    cells: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for model, metrics in found:
        for name, value in metrics.items():
            if (score := score_of(name, definition, similarity)) and value is not None:
                task, attribute, measure = score
                cells[(model, attribute)][f"{task} {measure.upper()}"].append(value)
    rows = []
    for (model, attribute), columns in sorted(cells.items()):
        scores = {c: mean(v) for c, v in sorted(columns.items())}
        for measure in ("GUS", "SNSR", "SNSV"):
            per_task = [v for c, v in scores.items() if c.endswith(f" {measure}")]
            if per_task:
                scores[f"avg {measure}"] = mean(per_task)
        rows.append({"Model": model, "Attribute": attribute, **scores})
    frame = pd.DataFrame(rows)
    order = ["Model", "Attribute",
             *[f"{t} GUS" for t in DECISION_TASKS],
             *[f"{t} {m}" for t in RECOMMENDATION_TASKS for m in ("SNSR", "SNSV")],
             "avg GUS", "avg SNSR", "avg SNSV"]
    known = [c for c in order if c in frame.columns]
    return frame[known + [c for c in frame.columns if c not in known]] if rows else frame


def table3(found: list[tuple[str, dict[str, float]]]) -> pd.DataFrame:
    cells: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for model, metrics in found:
        for name, value in metrics.items():
            if (m := FEEDBACK.match(name)) and value is not None:
                cells[(model, m["attribute"], m["group"])][m["m"].upper()].append(value)
    return pd.DataFrame([{"Model": model, "Attribute": attribute, "Group": group,
                          "RST": mean(v.get("RST", [])), "ANR": mean(v.get("ANR", []))}
                         for (model, attribute, group), v in sorted(cells.items())])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="run or sweep directories (searched recursively)")
    parser.add_argument("--out", type=Path, help="also write table2/table3 .md and .csv here")
    parser.add_argument("--definition", choices=DEFINITIONS, default="paper",
                        help="Table 2 from eq. 1-4 (paper) or the authors' released scoring")
    parser.add_argument("--similarity", choices=SIMILARITIES, default="prag",
                        help="the released SNSR/SNSV's similarity (with --definition released)")
    args = parser.parse_args()
    found = runs(args.paths)
    if not found:
        raise SystemExit(f"no metrics.json under {args.paths}")
    scoring = ("eq. 1-4" if args.definition == "paper"
               else f"the released scoring, {args.similarity.upper()} similarity")
    for name, frame in (("table2", table2(found, args.definition, args.similarity)),
                        ("table3", table3(found))):
        title = (f"Table 2: GUS (decisions), SNSR and SNSV (recommendations), {scoring}"
                 if name == "table2" else "Table 3: negative feedback, RST and ANR per group")
        print(f"\n{title}\n")
        print(frame.to_markdown(index=False, floatfmt=".3f") if len(frame) else "(no runs)")
        if args.out and len(frame):
            args.out.mkdir(parents=True, exist_ok=True)
            frame.to_csv(args.out / f"{name}.csv", index=False)
            (args.out / f"{name}.md").write_text(frame.to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
