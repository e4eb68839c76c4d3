"""A run's ``run.json`` as the report reads it: one typed record, older layouts migrated here.

Every entrypoint writes ``run.json`` (``outputs/run_record.py``). A run written before it
existed has only Hydra's ``.hydra/`` files: :func:`read_record` builds the same record from
them, as schema version 0, so no section patches older runs on its own. A record of a newer
schema than this reader knows is read for the fields it shares and says so in ``notes``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from benevaudit.outputs.run_record import RUN_RECORD, SCHEMA_VERSION

RAN_SINCE = 3      # the schema version that records ``ran``
FROM_HYDRA = 0     # the schema version given to a record built from ``.hydra/`` alone
# metrics.json keys that held what a run settled as it ran, before run.json's ``ran`` (schema 3)
LEGACY_RAN = {"cobia/stand_in": "stand_in", "fairmt/stand_in": "stand_in",
              "fairmt/answers": "answers", "fairmt/no_repeat_ngram_size": "no_repeat_ngram_size",
              "fairmt/target_system_prompt": "target_system_prompt"}


@dataclass(frozen=True)
class Machine:
    """Where a run ran: the CPU model, its vector flags, the core count and the GPUs."""

    cpu: str
    flags: tuple[str, ...]
    cores: int | None
    gpus: tuple[str, ...]

    def describe(self) -> str:
        """``Intel Xeon, 2 cores (avx512_bf16, amx_bf16), no GPU``; empty when unknown."""
        if not self.cpu:
            return ""
        cores = f", {self.cores} cores" if self.cores else ""
        flags = f" ({', '.join(self.flags)})" if self.flags else ""
        return f"{self.cpu}{cores}{flags}, " + (", ".join(self.gpus) or "no GPU")


NO_MACHINE = Machine("", (), None, ())


@dataclass(frozen=True)
class RunRecord:
    """What one run was: entrypoint, choices, resolved config, data, versions, machine, times."""

    schema_version: int
    entrypoint: str
    status: str
    choices: dict[str, str]
    config: dict[str, Any]
    inputs: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    machine: Machine = NO_MACHINE
    started: str = ""
    ended: str = ""
    notes: tuple[str, ...] = ()
    # the run whose settings this one took over what was composed, and their keys (schema 2;
    # ("", ()) where none were, or the record is older)
    adopted_from: str = ""
    adopted: tuple[str, ...] = ()
    # what the run settled as it ran (schema 3; from an older run's metrics.json before it)
    ran: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The settings of a run's recorded config that the report reads, typed, read once here.

    Where an older run's config lacks one, the gap is filled here, once, with what such a run
    did: no ``probe.mode`` is text (before audio mode), no ``probe.prag.normalise`` is
    ``printed`` (before the option). Each other field is None (or empty) where the run's
    entrypoint has no such key."""

    seed: int | None = None
    ckpt: str | None = None
    data_kind: str | None = None
    intervention: Any = None                 # the block or list of steps, as composed
    names: dict[str, str] = field(default_factory=dict)   # group -> its block's ``name``
    detector_kind: str | None = None
    detector_mode: str | None = None
    detector_judge: str | None = None
    detector_demographics: bool | None = None
    probe_kind: str | None = None
    probe_mode: str = "text"
    k: int = 0                               # FairDialogue's list length K (0: none)
    prag_normalise: str = "printed"
    wer_strata: tuple[float, ...] = ()
    answers_path: str | None = None
    data_set: str | None = None              # FairMT's set (1k, 10k)
    judge_prompt: str | None = None          # FairMT's judge prompt (released, paper)
    judge_turns: str | None = None           # FairMT's judged turns (fifth, all)
    # what the run settled as it ran (``run.json``'s ``ran``)
    stand_in: bool = False                   # it read the invented stand-in, not a release
    answers_from: str | None = None          # replies read in place of the target's


def _at(config: dict[str, Any], key: str) -> Any:
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def settings_of(config: dict[str, Any], ran: dict[str, Any] | None = None) -> Settings:
    """The typed settings of a recorded config (``run.json``'s, or ``.hydra/``'s) and of what
    the run settled as it ran (``ran``)."""
    ran = ran or {}
    seed, k = _at(config, "seed"), _at(config, "probe.k")
    strata, demographics = _at(config, "probe.audio.wer_strata"), _at(config, "detector.demographics")
    return Settings(
        seed=int(seed) if isinstance(seed, (int, float)) else None,
        ckpt=_text(_at(config, "ckpt")), data_kind=_text(_at(config, "data.kind")),
        intervention=_at(config, "intervention"),
        names={str(g): str(b["name"]) for g, b in config.items()
               if isinstance(b, dict) and b.get("name") is not None},
        detector_kind=_text(_at(config, "detector.kind")),
        detector_mode=_text(_at(config, "detector.mode")),
        detector_judge=_text(_at(config, "detector.judge") or None),
        detector_demographics=demographics if isinstance(demographics, bool) else None,
        probe_kind=_text(_at(config, "probe.kind")),
        probe_mode=str(_at(config, "probe.mode") or "text"),
        k=int(k) if isinstance(k, (int, float)) else 0,
        prag_normalise=str(_at(config, "probe.prag.normalise") or "printed"),
        wer_strata=tuple(float(x) for x in strata) if isinstance(strata, list) else (),
        answers_path=_text(_at(config, "probe.answers.path")),
        data_set=_text(_at(config, "probe.data.set")),
        judge_prompt=_text(_at(config, "probe.judge_prompt")),
        judge_turns=_text(_at(config, "probe.judge_turns")),
        stand_in=bool(ran.get("stand_in")), answers_from=_text(ran.get("answers")))


def _machine(raw: Any) -> Machine:
    if not isinstance(raw, dict):
        return NO_MACHINE
    cpu = _object(raw, "cpu")
    cores = cpu.get("cores")
    return Machine(str(cpu.get("model") or ""), tuple(str(f) for f in cpu.get("flags") or ()),
                   int(cores) if isinstance(cores, int) else None,
                   tuple(str(g) for g in raw.get("gpu") or ()))


def _object(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def migrate(raw: dict[str, Any]) -> RunRecord:
    """A parsed ``run.json`` of any schema version as the current record."""
    version = raw.get("schema_version")
    version = version if isinstance(version, int) else SCHEMA_VERSION
    notes = ((f"run.json schema {version} is newer than this reader's {SCHEMA_VERSION}: "
              "fields it does not know are ignored",) if version > SCHEMA_VERSION else ())
    choices, config, inputs, adopted = (_object(raw, k)
                                        for k in ("choices", "config", "inputs", "adopted"))
    return RunRecord(
        schema_version=version, entrypoint=str(raw.get("entrypoint") or "unknown"),
        status=str(raw.get("status") or "unknown"),
        choices={str(k): str(v) for k, v in choices.items() if v is not None},
        config=config, inputs=inputs,
        versions={str(k): str(v) for k, v in _object(raw, "versions").items()},
        machine=_machine(raw.get("machine")), started=str(raw.get("started") or ""),
        ended=str(raw.get("ended") or ""), notes=notes,
        adopted_from=str(adopted.get("from") or ""),
        adopted=tuple(str(k) for k in adopted.get("keys") or ()), ran=_object(raw, "ran"))


def ran_of_metrics(metrics: dict[str, float]) -> dict[str, Any]:
    """What a run before schema 3 recorded of ``ran`` as floats in its ``metrics.json``."""
    ran: dict[str, Any] = {}
    for key, value in metrics.items():
        fact = LEGACY_RAN.get(key)
        if fact is not None and value == value:
            ran[fact] = bool(value) if fact != "no_repeat_ngram_size" else int(value)
    if ran.get("answers"):
        ran["answers"] = "an answers folder"      # the older record says only that one was
    else:
        ran.pop("answers", None)
    return ran


def from_hydra(task: str, config: dict[str, Any], choices: dict[str, str],
               metrics: dict[str, float] | None = None) -> RunRecord:
    """The record of a run that has no ``run.json``: what its ``.hydra/`` files say (and its
    ``metrics.json`` of what it settled as it ran)."""
    return RunRecord(schema_version=FROM_HYDRA, entrypoint=task, status="unknown",
                     choices=dict(choices), config=config, ran=ran_of_metrics(metrics or {}),
                     notes=("no run.json: versions, machine and times unknown",))


def read_hydra_config(run_dir: Path) -> dict[str, Any]:
    """``<run_dir>/.hydra/config.yaml`` as a dict; {} where it is absent or unreadable."""
    path = run_dir / ".hydra" / "config.yaml"
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, yaml.YAMLError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def record_or_hydra(run_dir: Path) -> RunRecord | None:
    """The record of another run (a training run a detector loads): its ``run.json``, else its
    ``.hydra`` config; None where neither reads."""
    try:
        record = read_record(run_dir)
    except ValueError:
        record = None
    if record is None:
        config = read_hydra_config(run_dir)
        record = from_hydra(str(config.get("task_name") or "unknown"), config, {}) if config \
            else None
    return record


def read_record(run_dir: Path) -> RunRecord | None:
    """``<run_dir>/run.json`` migrated to the current record; None where it is absent.

    A torn or non-object file raises ``ValueError`` naming it."""
    path = run_dir / RUN_RECORD
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: half written or not JSON ({e})") from e
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: not a JSON object")
    record = migrate(raw)
    if record.schema_version < RAN_SINCE:       # ``ran`` was floats in metrics.json
        record = replace(record, ran=ran_of_metrics(_metrics(run_dir)))
    return record


def _metrics(run_dir: Path) -> dict[str, float]:
    """A run's ``metrics.json``, its numbers only; {} where it does not read."""
    try:
        raw = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return ({str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float))}
            if isinstance(raw, dict) else {})
