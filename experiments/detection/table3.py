"""The study's Table 3 from run directories only: binary accuracy, P, R, F1, then TR_N, TR_OB,
TR_BB and delta (percent), one row per detect.py run (its metrics.json and .hydra/config.yaml).

    python experiments/detection/table3.py <run or sweep dir>... [--csv table3.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import yaml

COLUMNS = [("Acc", "binary/accuracy"), ("P", "binary/precision"), ("R", "binary/recall"),
           ("F1", "binary/f1"), ("TR_N", "trigger/TR_N"), ("TR_OB", "trigger/TR_OB"),
           ("TR_BB", "trigger/TR_BB"), ("Δ", "trigger/delta_OB_BB")]


def runs(paths: list[str]) -> list[Path]:
    """Every directory under ``paths`` holding a detect run's metrics.json, in name order."""
    found = []
    for p in map(Path, paths):
        found += [m.parent for m in sorted(p.rglob("metrics.json"))
                  if (m.parent / ".hydra" / "config.yaml").is_file()]
    return found


def row(run: Path) -> dict[str, object] | None:
    cfg = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
    if cfg.get("task_name") != "detect" or cfg.get("flips", {}).get("with"):
        return None
    det = cfg["detector"]
    name = det["name"]
    if det.get("kind") == "judge":
        judge = det.get("judge") or cfg.get("judges", {}).get("name", "")
        name += f" [{judge}{', +demo' if det.get('demographics', True) else ', no demo'}, {det.get('mode')}]"
    metrics = json.loads((run / "metrics.json").read_text())
    out: dict[str, object] = {"detector": name, "n": metrics.get("detect/n")}
    for col, key in COLUMNS:
        v = metrics.get(key)
        out[col] = None if v is None else round(100 * v, 1)
    out["invalid %"] = None if metrics.get("detect/invalid_rate") is None else \
        round(100 * metrics["detect/invalid_rate"], 1)
    out["run"] = str(run)
    return out


def markdown(rows: list[dict[str, object]]) -> str:
    head = ["detector", "n", *[c for c, _ in COLUMNS], "invalid %"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = ["—" if r[h] is None else (f"{r[h]:g}" if isinstance(r[h], float) else str(r[h]))
                 for h in head]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--csv", type=Path, default=None)
    args = parser.parse_args()
    rows = [r for r in map(row, runs(args.paths)) if r is not None]
    if not rows:
        sys.exit(f"no detect.py run directories under {args.paths}")
    print(markdown(rows))
    if args.csv:
        with args.csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
