"""Find run directories and read each into one record: metrics, resolved config, group choices.

A run directory is any directory that holds ``metrics.json`` or ``.hydra/``; audit recipes nest
them (``audit/evaluation/punct``, ``audit/training/3``), so a root is searched recursively and
the search stops at each run (a run never holds another run). Nothing is skipped in silence:
a run that failed, is still running or was half written keeps a record with ``status`` and the
``reason``, and the report lists it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from typing import Any

import yaml

from benevaudit.errors import InputError
from benevaudit.files import check_parquet_file
from benevaudit.report.record import RunRecord, Settings, from_hydra, read_record, settings_of

try:  # the C loader reads a thousand configs several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeLoader as _Loader  # type: ignore[assignment,unused-ignore]  # CSafeLoader's stub type differs

OK, INCOMPLETE, BROKEN = "ok", "incomplete", "broken"
COMPLETE = "_COMPLETE"    # written last by every entrypoint (pipelines/cli.py)
# folders inside a run that are never runs themselves, nor hold any
NOT_RUNS = {".hydra", "wandb", "model", "checkpoints", "csv", "attribution_store", "__pycache__"}
# overrides that name where things are, not what was run: not part of a configuration's identity
PLACE_KEYS = ("path", "dir", "ckpt", "cache", "hydra.", "progress", "wandb.")


@dataclass
class Run:
    """One run directory as the report sees it."""

    path: Path
    name: str                                   # path relative to the report's roots
    status: str = OK                            # ok | incomplete | broken
    reason: str = ""
    task: str = "unknown"                       # task_name: train, evaluate, detect, probe, …
    metrics: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, str] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    sweep: str = ""                             # the sweep directory's name: the run's W&B group
    record: RunRecord | None = None             # run.json, or what .hydra/ says of an older run
    _settings: Settings | None = field(default=None, repr=False, compare=False)

    @property
    def settings(self) -> Settings:
        """What the run's recorded config says, typed (:class:`Settings`): its ``run.json``'s,
        else its ``.hydra/`` config's. The report reads a run's config only through here."""
        if self._settings is None:
            self._settings = (settings_of(self.record.config, self.record.ran) if self.record
                              else settings_of(self.config))
        return self._settings

    @property
    def seed(self) -> int | None:
        return self.settings.seed

    def chosen(self, group: str) -> str:
        """The option of ``group`` the run ran (``target``, ``detector``): Hydra's recorded
        choice, else the block's ``name``, else ``?``."""
        return self.choices.get(group) or self.settings.names.get(group) or "?"

    @property
    def condition(self) -> str:
        """What was run, seed left out: task, group choices and the overrides that change the
        experiment (paths and checkpoints excluded), so seeds of one configuration share it."""
        parts = [self.task] + [f"{k}={v}" for k, v in sorted(self.choices.items())]
        parts += sorted(o for o in self.overrides if not _is_place_or_seed(o))
        return " ".join(parts)


def _is_place_or_seed(override: str) -> bool:
    key = override.split("=", 1)[0].lstrip("+~")
    return key == "seed" or any(p in key for p in PLACE_KEYS)


def _is_run(path: Path) -> bool:
    return (path / "metrics.json").is_file() or (path / ".hydra").is_dir()


def find_runs(root: Path) -> list[Path]:
    """Every run directory at or under ``root``, sorted; the walk does not enter runs."""
    if _is_run(root):
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if "metrics.json" in filenames or ".hydra" in dirnames:
            found.append(here)
            dirnames.clear()
            continue
        dirnames[:] = sorted(d for d in dirnames if d not in NOT_RUNS)
    return sorted(found)


def expand(spec: str | Path | Sequence[str | Path]) -> list[Path]:
    """``runs=`` as given: one directory, a glob, or a list of either (comma-separated works)."""
    items: Iterable[str | Path]
    if isinstance(spec, (str, Path)):
        items = [s for s in str(spec).split(",") if s.strip()]
    else:
        items = spec
    roots: list[Path] = []
    for item in items:
        text = str(item).strip()
        matched = sorted(glob(text, recursive=True)) if any(c in text for c in "*?[") else [text]
        if not matched or not all(Path(m).exists() for m in matched):
            raise FileNotFoundError(f"runs={text}: no such directory (or the glob matched none)")
        files = [m for m in matched if not Path(m).is_dir()]
        if files:
            raise InputError(f"runs={files[0]}: a file, not a directory (expected a run or "
                             "sweep directory, or a glob of them)")
        roots += [Path(m) for m in matched]
    return roots


def _load_yaml(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=_Loader)


def _read_metrics(run: Run) -> None:
    path = run.path / "metrics.json"
    if not path.is_file():
        run.status = INCOMPLETE
        error = run.path / "error.txt"                 # written by a run stopped by bad input
        run.reason = (f"no metrics.json: failed: {error.read_text(encoding='utf-8').strip()}"
                      if error.is_file() else "no metrics.json: the run failed or has not "
                      "finished (see its .log file)")
        return
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        run.status, run.reason = BROKEN, f"metrics.json is half written or not JSON ({e})"
        return
    if not isinstance(raw, dict):
        run.status, run.reason = BROKEN, "metrics.json is not a {name: number} object"
        return
    bad = [k for k, v in raw.items() if v is not None and not isinstance(v, (int, float))]
    run.metrics = {k: (float("nan") if v is None else float(v)) for k, v in raw.items()
                   if k not in bad}
    if bad:
        run.reason = f"metrics.json: non-numeric value(s) ignored for {bad[:3]}"


def _read_hydra(run: Run) -> None:
    hydra_dir = run.path / ".hydra"
    cfg_path = hydra_dir / "config.yaml"
    if not cfg_path.is_file():
        note = "no .hydra/config.yaml: configuration unknown"
        run.reason = f"{run.reason}; {note}" if run.reason else note
        return
    try:
        run.config = _load_yaml(cfg_path) or {}
        hydra_yaml = hydra_dir / "hydra.yaml"
        runtime = (_load_yaml(hydra_yaml) or {}).get("hydra", {}) if hydra_yaml.is_file() else {}
        choices = (runtime.get("runtime") or {}).get("choices") or {}
        run.choices = {k: str(v) for k, v in choices.items()
                       if not k.startswith("hydra") and v is not None}
        if str(runtime.get("mode", "")).endswith("MULTIRUN"):
            run.sweep = Path(str((runtime.get("sweep") or {}).get("dir", ""))).name
        over = hydra_dir / "overrides.yaml"
        run.overrides = [str(o) for o in (_load_yaml(over) or [])] if over.is_file() else []
    except yaml.YAMLError as e:
        run.status, run.reason = BROKEN, f"{hydra_dir}: unreadable YAML ({e})"
        return
    run.task = str(run.config.get("task_name") or runtime.get("job", {}).get("name") or "unknown")


def _read_record(run: Run) -> None:
    try:
        run.record = read_record(run.path)
    except ValueError as e:
        run.reason = f"{run.reason}; {e}" if run.reason else str(e)
    if run.record is None and run.config:
        run.record = from_hydra(run.task, run.config, run.choices, run.metrics)


def read_run(path: Path, name: str) -> Run:
    """One record; problems are recorded in ``status``/``reason``, never raised."""
    run = Run(path=path, name=name)
    _read_metrics(run)
    _read_hydra(run)
    _read_record(run)
    if run.status == OK and (path / ".hydra").is_dir() and not (path / COMPLETE).is_file():
        # files of a run are whole (written by rename) but a killed run has only some of them
        run.status, run.metrics = INCOMPLETE, {}
        run.reason = (f"no {COMPLETE} marker: the run was killed or stopped before it "
                      "finished; left out (rerun it to complete it)")
    return run


def check_named(roots: Sequence[Path]) -> None:
    """A run named itself in ``runs=`` must read: an unreadable metrics.json, .hydra YAML or
    Parquet file of it is an error naming the file (runs found under a sweep directory are
    listed in the report instead, with what was wrong)."""
    for root in roots:
        if _is_run(root):
            run = read_run(root, root.name)
            if run.status == BROKEN:
                raise InputError(f"runs={root}: {run.reason}")
            for name in ("predictions.parquet", "responses.parquet"):
                if (root / name).exists():
                    check_parquet_file(root / name, None, f"the {name} this run wrote")


def collect(roots: Sequence[Path], exclude: Path | None = None) -> list[Run]:
    """Every run under the roots (once each), named relative to its root.

    ``exclude`` is the report's own run directory, and reports are never runs of a report."""
    todo: dict[Path, tuple[Path, str]] = {}
    skip = exclude.resolve() if exclude else None
    for root in roots:
        for path in find_runs(root):
            real = path.resolve()
            if real in todo or real == skip:
                continue
            rel = path.relative_to(root) if path != root else Path(path.name)
            name = str(Path(root.name) / rel) if len(roots) > 1 and path != root else str(rel)
            todo[real] = (path, name)
    runs = [read_run(path, name) for path, name in todo.values()]
    return [r for r in runs if r.task != "report"]
