"""Run directories as benevaudit entrypoints leave them, built for report tests, notebooks and the
report benchmark: ``.hydra/`` (config, hydra runtime choices, overrides), ``metrics.json``,
``predictions.parquet`` / ``responses.parquet`` and PNG figures. Metrics are computed from the
rows with the library's own metric functions, so tables and rows agree as in a real run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

CLASSES = ("N", "OB", "BB")
AGES, GENDERS = ("young", "middle-aged", "elder"), ("male", "female")
_PNG: dict[str, bytes] = {}


def png(title: str) -> bytes:
    """A small real PNG (matplotlib, Agg) whose title names the run."""
    if title not in _PNG:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
        ax.bar([0, 1, 2], [1, 2, 3])
        ax.set_title(title, fontsize=6)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        _PNG[title] = buf.getvalue()
    return _PNG[title]


def write_run(path: Path, task: str, choices: dict[str, str], config: dict[str, Any] | None = None,
              metrics: dict[str, float] | None = None, overrides: list[str] | None = None,
              tables: dict[str, pd.DataFrame] | None = None, figures: tuple[str, ...] = (),
              sweep: Path | None = None) -> Path:
    """One run directory; ``metrics=None`` leaves metrics.json out (a failed run); ``sweep``
    marks it as a job of that multirun directory."""
    hydra_dir = path / ".hydra"
    hydra_dir.mkdir(parents=True, exist_ok=True)
    (path / "run.json").unlink(missing_ok=True)     # the config given here is what ran
    cfg = {"task_name": task, "seed": 42, **(config or {})}
    (hydra_dir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    runtime = {"hydra": {"runtime": {"choices": {**choices, "hydra/launcher": "basic"},
                                     "output_dir": str(path)},
                         "job": {"name": task}}}
    if sweep is not None:
        runtime["hydra"].update(mode="MULTIRUN", sweep={"dir": str(sweep), "subdir": path.name})
    (hydra_dir / "hydra.yaml").write_text(yaml.safe_dump(runtime))
    (hydra_dir / "overrides.yaml").write_text(yaml.safe_dump(overrides or []))
    if metrics is not None:
        (path / "metrics.json").write_text(json.dumps(metrics, indent=1))
        (path / "_COMPLETE").write_text("complete\n")
    for name, frame in (tables or {}).items():
        frame.to_parquet(path / name, index=False)
    for name in figures:
        (path / name).write_bytes(png(f"{path.name} · {name}"))
    return path


def predictions(n_triplets: int, accuracy: float, seed: int) -> pd.DataFrame:
    """Matched triplets (N, OB, BB of one condition) with seeded predictions."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_triplets):
        for label in CLASSES:
            pred = label if rng.random() < accuracy else rng.choice([c for c in CLASSES if c != label])
            rows.append({"id": f"bd-smollm2-mh-{label.lower()}-{t:010x}", "label": label,
                         "pred": str(pred), "role": "mental_health", "generator": "smollm2",
                         "user_age": AGES[t % 3], "user_gender": GENDERS[t % 2],
                         "user_race": f"r{t}", "user_ability": "none",
                         "agent": None if t % 4 == 0 else "young/female/White"})
    return pd.DataFrame(rows)


def classifier_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """What train/evaluate write for the test split (scikit-learn; torch stays unimported)."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    y, p = frame["label"], frame["pred"]
    out = {"test/macro_f1": f1_score(y, p, labels=list(CLASSES), average="macro", zero_division=0),
           "test/accuracy": accuracy_score(y, p), "test/n": float(len(y))}
    for name, fn in (("recall", recall_score), ("precision", precision_score), ("f1", f1_score)):
        for c, v in zip(CLASSES, fn(y, p, labels=list(CLASSES), average=None, zero_division=0)):
            out[f"test/{name}_{c}"] = float(v)
    return {k: float(v) for k, v in out.items()}


def audit_dir(root: Path, seeds: tuple[int, ...] = (42,), n_triplets: int = 16) -> Path:
    """A fine-tuning audit as experiments/finetune_audit/run.sh lays it out (+ the P+RM row)."""
    plan = [("baseline", "train", "none", {}), ("evaluation/punct", "evaluate", "punct", {}),
            ("evaluation/mask", "evaluate", "mask", {}),
            ("evaluation/punct+mask", "evaluate", "punct+mask", {}),
            ("evaluation/random_mask", "evaluate", "random_mask", {}),
            ("evaluation/punct+random_mask", "evaluate", "punct+random_mask", {}),
            ("training/0", "train", "freq_norm", {}), ("training/1", "train", "sym_inject+shuffle", {})]
    steps = {"none": {}, "punct": {"punct": {}}, "mask": {"mask": {}},
             "punct+mask": {"punct": {}, "mask": {}}, "random_mask": {"random_mask": {}},
             "punct+random_mask": {"punct": {}, "random_mask": {}},
             "freq_norm": {"punct": {}, "freq_norm": {}},
             "sym_inject+shuffle": {"punct": {}, "sym_inject": {}, "shuffle": {}}}
    for seed in seeds:
        for i, (sub, task, iv, _) in enumerate(plan):
            where = root / (f"seed{seed}" if len(seeds) > 1 else "") / sub
            frame = predictions(n_triplets, 0.9 - 0.05 * i, seed * 100 + i)
            base = where.parent.parent / "baseline"       # evaluate.py's ckpt=<baseline run>
            ckpt = {"ckpt": str(base)} if task == "evaluate" else {}
            write_run(where, task, {"intervention": iv, "model": "minilm", "data": "embedded"},
                      {"seed": seed, "intervention": {"name": iv, "steps": steps[iv]}, **ckpt},
                      classifier_metrics(frame), [f"intervention={iv}", f"seed={seed}"],
                      {"predictions.parquet": frame}, ("confusion_matrix.png",))
    base = root / (f"seed{seeds[0]}" if len(seeds) > 1 else "") / "baseline"
    (base / "cue_lexicon.json").write_text(json.dumps(
        {c: [{"word": f"{c.lower()}cue{k}", "score": 1.0 / (k + 1)} for k in range(12)]
         for c in CLASSES}))
    (base / "attribution_heatmap.png").write_bytes(png("baseline relevance"))
    return root
