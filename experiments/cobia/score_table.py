"""Print CoBia's score table from run directories alone: per category, a row per target ×
method (UCC included), a column per judge, each cell the bias rate [95% Wilson interval].

    python experiments/cobia/score_table.py outputs/cobia/sweep [more dirs] [--out DIR]

Reads ``metrics.json`` and ``.hydra/config.yaml`` of every run found below the given
directories (runs without ``cobia/`` metrics are ignored); with ``--out`` also writes
``score_table.csv`` (long form) and ``score_table.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
import yaml

from benevaudit.probes.cobia.tables import METHOD_ORDER, cells, fmt


def target_name(run: Path) -> str:
    """The target's name, with its model where the name does not already say it, so two
    models swept through one target option (``target.llm.model=a,b``) stay two rows."""
    config = run / ".hydra" / "config.yaml"
    if config.is_file():
        target = (yaml.safe_load(config.read_text()) or {}).get("target") or {}
        name = str(target.get("name") or "?")
        model = str((target.get("llm") or {}).get("model") or "")
        return f"{name} ({model})" if model and model.split("/")[-1] not in name else name
    return run.name


def collect(roots: list[Path]) -> pd.DataFrame:
    rows = []
    for root in roots:
        for metrics_file in sorted(root.rglob("metrics.json")):
            metrics = json.loads(metrics_file.read_text())
            if not any(k.startswith("cobia/") for k in metrics):
                continue
            clean = {k: (float("nan") if v is None else v) for k, v in metrics.items()}
            target = target_name(metrics_file.parent)
            rows += [{"target": target, "run": str(metrics_file.parent), **c} for c in cells(clean)]
    return pd.DataFrame(rows)


def layout(frame: pd.DataFrame) -> str:
    """Markdown: one table per category, rows target × method, columns judges."""
    out = []
    judges = sorted(frame["judge"].unique())
    method_key = {m: i for i, m in enumerate(METHOD_ORDER)}
    for category in frame["category"].drop_duplicates():
        part = frame[frame["category"] == category]
        out += [f"## {category}", "", "| target | method | " + " | ".join(judges) + " |",
                "|---|---|" + "---|" * len(judges)]
        keys = part[["target", "method"]].drop_duplicates().values.tolist()
        keys.sort(key=lambda k: (k[0], method_key.get(k[1], 99), k[1]))
        for target, method in keys:
            found = part[(part["target"] == target) & (part["method"] == method)]
            by_judge = {r.judge: fmt(r.rate, r.ci_low, r.ci_high) for r in found.itertuples()}
            label = method.upper() if len(method) == 3 else method
            out.append(f"| {target} | {label} | " + " | ".join(by_judge.get(j, "")
                                                               for j in judges) + " |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run or sweep directories")
    parser.add_argument("--out", type=Path, help="also write score_table.csv and .md here")
    args = parser.parse_args()
    frame = collect(args.runs)
    if frame.empty:
        print(f"no CoBia runs (metrics.json with cobia/ metrics) under {args.runs}",
              file=sys.stderr)
        return 1
    text = layout(frame)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out / "score_table.csv", index=False)
        (args.out / "score_table.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
