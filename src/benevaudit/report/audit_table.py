"""The fine-tuning audit table (the study's Table 4) from run directories alone.

Each run directory holds ``metrics.json`` and ``.hydra/config.yaml``; the side of the audit comes
from the task (``evaluate`` = a frozen model on an edited test set, ``train`` with an
intervention = retrained on edited data and tested clean) and the condition from
``intervention.code``. Usage: ``python -m benevaudit.report.audit_table <audit dir> [--csv out.csv]``.
"""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from benevaudit.audit.interventions import code_for, name_for, steps_from_config

COLUMNS = ("test/macro_f1", "test/recall_N", "test/recall_OB", "test/recall_BB",
           "test/precision_BB")
HEADERS = ("Side", "Condition", "Macro-F1", "Recall N", "Recall OB", "Recall BB", "Precision BB")
EVAL_ORDER = ("—", "P", "M", "P+M", "SH", "RM")
TRAIN_ORDER = ("P+F", "P+S", "SH", "P+F+SH", "P+S+SH")


@dataclass(frozen=True)
class Row:
    side: str          # "clean" | "evaluation" | "training"
    code: str
    name: str
    metrics: dict[str, float]
    run_dir: Path


def read_run(run: Path) -> Row | None:
    cfg_path, metrics_path = run / ".hydra" / "config.yaml", run / "metrics.json"
    if not (cfg_path.is_file() and metrics_path.is_file()):
        return None
    cfg = yaml.safe_load(cfg_path.read_text())
    metrics = json.loads(metrics_path.read_text())
    steps = steps_from_config(cfg.get("intervention") or {})
    code, name = code_for(steps), name_for(steps)  # also right for list syntax [a,b]
    if cfg.get("task_name") == "evaluate":
        side = "evaluation"
    else:
        side = "training" if steps else "clean"
    return Row(side, code, name, metrics, run)


def collect(audit_dir: Path) -> list[Row]:
    rows = [r for p in sorted(audit_dir.rglob("metrics.json")) if (r := read_run(p.parent))]
    if not rows:
        raise FileNotFoundError(f"{audit_dir}: no run directories (metrics.json + .hydra/) here")

    def key(r: Row) -> tuple:
        side = ("clean", "evaluation", "training").index(r.side)
        order = EVAL_ORDER if r.side == "evaluation" else TRAIN_ORDER
        return side, order.index(r.code) if r.code in order else len(order), r.code
    return sorted(rows, key=key)


def table_rows(rows: list[Row]) -> list[list[str]]:
    out = []
    for r in rows:
        cells = [f"{r.metrics[c]:.3f}" if r.metrics.get(c) is not None else "n/a" for c in COLUMNS]
        out.append([r.side, r.code, *cells])
    return out


def markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines)


def write_csv(rows: list[Row], path: Path) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*HEADERS, "intervention", "run_dir"])
        for r, cells in zip(rows, table_rows(rows)):
            w.writerow([*cells, r.name, str(r.run_dir)])
    return path


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Print the fine-tuning audit table from run dirs.")
    p.add_argument("audit_dir", type=Path)
    p.add_argument("--csv", type=Path, default=None, help="default: <audit_dir>/audit_table.csv")
    args = p.parse_args(argv)
    rows = collect(args.audit_dir)
    md = markdown(rows)
    (args.audit_dir / "audit_table.md").write_text(md + "\n")
    csv_path = write_csv(rows, args.csv or args.audit_dir / "audit_table.csv")
    print(md)
    print(f"\n(markdown: {args.audit_dir / 'audit_table.md'}; CSV: {csv_path})")


if __name__ == "__main__":
    main()
