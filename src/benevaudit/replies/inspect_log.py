"""Inspect AI eval logs (``.eval`` or ``.json``, a file or a folder of them), read through
Inspect's own log API (``read_eval_log``, ``list_eval_logs``), as plain samples and as dialogue
records.

:func:`read_samples` gives each sample's task, id, epoch, metadata, its messages as text
(``role`` system | user | assistant; tool messages and non-text parts are left out) and its
scores. benevaudit's own tasks (``benevaudit/<task>``) put each item's identity in the sample's
metadata, so a probe scores their replies with its own scoring (``probe.answers.inspect_log``).

:func:`read_inspect_log` turns every assistant reply of every sample into one unlabelled record
for detect.py (``data=inspect_log``): the conversation up to the reply, the reply last (``turns:
last`` keeps each sample's final reply, ``all`` every reply). ``meta`` holds ``probe`` (the
task), ``task`` (the sample's ``task`` metadata, else the log's task), ``turn`` (the reply's
rank among the sample's replies), ``group`` (its ``group`` or ``dimension`` metadata, else
``all``), and ``judges``: each scorer whose score metadata says ``biased`` (True, False, or None
for an invalid verdict). Errors name the log and the sample, never a message's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from benevaudit.errors import ConfigError, InputError
from benevaudit.replies.spec import INSPECT_LOG as EXPECTED
from benevaudit.replies.spec import InspectLogDataSpec
from benevaudit.schema import USER_FIELDS, Dialogue, Turn

UNSPECIFIED = {k: "unspecified" for k in USER_FIELDS}


@dataclass(frozen=True)
class LoggedSample:
    """One sample of an eval log, as plain values."""

    log: str                              # the log file it came from
    task: str                             # the log's task name (benevaudit/fairmt)
    id: str
    epoch: int
    metadata: dict[str, Any]
    messages: list[dict[str, str]]        # [{role, content}] in order, text only
    scores: dict[str, dict[str, Any]]     # scorer -> {value, answer, explanation, metadata}

    @property
    def replies(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "assistant"]


def log_files(path: str, option: str = "data.path") -> list[Path]:
    """The log files at ``path``: the file itself, or every log under the folder (Inspect's
    listing, oldest first); none is an error naming ``option``."""
    # Inspect AI is an optional package (make inspect-env); only its logs need it
    from inspect_ai.log import list_eval_logs

    found = Path(path).expanduser()
    if found.is_file():
        return [found]
    if not found.is_dir():
        raise ConfigError(f"{option}={path}: no such file or directory (expected {EXPECTED})")
    files = sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(found)))
    if not files:
        raise ConfigError(f"{option}={path}: no .eval or .json log in it (expected {EXPECTED})")
    return files


def text_messages(messages: list[Any]) -> list[dict[str, str]]:
    """Inspect chat messages as ``{role, content}`` text (system, user, assistant only)."""
    return [{"role": m.role, "content": m.text} for m in messages
            if m.role in ("system", "user", "assistant")]


def read_samples(path: str, option: str = "data.path") -> list[LoggedSample]:
    """Every sample of every log at ``path``, in log and sample order; a log that did not
    finish (no samples) is an error naming it."""
    # Inspect AI is an optional package (make inspect-env); only its logs need it
    from inspect_ai.log import read_eval_log

    out: list[LoggedSample] = []
    for file in log_files(path, option):
        try:
            log = read_eval_log(str(file))
        except (OSError, ValueError) as error:
            raise InputError(f"{file}: not a readable Inspect AI eval log ({type(error).__name__})"
                             ) from None
        if not log.samples:
            raise InputError(f"{file}: the log holds no samples (status {log.status}); expected "
                             f"{EXPECTED} of a run that finished")
        out += [LoggedSample(str(file), log.eval.task, str(s.id), int(s.epoch),
                             dict(s.metadata or {}), text_messages(s.messages),
                             {name: {"value": sc.value, "answer": sc.answer,
                                     "explanation": sc.explanation,
                                     "metadata": dict(sc.metadata or {})}
                              for name, sc in (s.scores or {}).items()})
                for s in log.samples]
    return out


def inspect_log_files(spec: InspectLogDataSpec) -> list[Path]:
    """The files the reader opens (their sha256 goes in the run's ``inputs.json``)."""
    return log_files(spec.path)


def judges_of(sample: LoggedSample) -> dict[str, Optional[bool]]:
    """Each scorer's bias verdict where its score metadata carries one (``biased``)."""
    return {name: score["metadata"]["biased"] for name, score in sample.scores.items()
            if "biased" in score["metadata"]}


def read_inspect_log(spec: InspectLogDataSpec) -> list[Dialogue]:
    """One unlabelled record per reply kept (``spec.turns``), in log, sample and turn order."""
    out: list[Dialogue] = []
    for sample in read_samples(spec.path):
        where = f"{sample.log}: sample {sample.id} (epoch {sample.epoch})"
        turns: list[Turn] = []
        system: list[str] = []
        replies = []
        for message in sample.messages:
            if message["role"] == "system":
                system.append(message["content"])
            elif message["role"] == "user":
                turns.append(Turn("user", "\n\n".join([*system, message["content"]])))
                system = []
            else:
                turns.append(Turn("agent", message["content"]))
                if turns[0].speaker == "user":
                    replies.append(len(turns))
        if not replies:
            raise InputError(f"{where}: no assistant reply after a user message to score")
        kept = replies if spec.turns == "all" else replies[-1:]
        out += [record(sample, turns[:end], replies.index(end) + 1) for end in kept]
    return out


def record(sample: LoggedSample, turns: list[Turn], turn: int) -> Dialogue:
    meta = sample.metadata
    group = meta.get("group", meta.get("dimension", "all"))
    suffix = f"/epoch_{sample.epoch}" if sample.epoch > 1 else ""
    return Dialogue(id=f"{sample.id}{suffix}/turn_{turn}", label=None,
                    role=f"inspect_{sample.task.split('/')[-1]}", generator=sample.task,
                    user=dict(UNSPECIFIED), agent=None, turns=tuple(turns),
                    meta={"source": "inspect_log", "probe": sample.task,
                          "task": str(meta.get("task", sample.task)), "turn": turn,
                          "group": str(group), "judges": judges_of(sample),
                          "reply_turn": len(turns) - 1})
