"""The ``data`` blocks of ``data=probe_run`` and ``data=inspect_log``: which probe run's, or
which Inspect AI run's, replies detect.py scores."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import model_validator

from benevaudit.errors import ConfigError
from benevaudit.specs import Spec

RESPONSES = "responses.parquet"
EXPECTED = f"a probe run directory (python probe.py writes its {RESPONSES}) or that file"
INSPECT_LOG = "an Inspect AI eval log (.eval or .json) or a folder of them"


def responses_file(path: str) -> Path:
    """The run's ``responses.parquet``: ``path`` itself, or the file in that directory."""
    found = Path(path).expanduser()
    return found / RESPONSES if found.is_dir() else found


class ProbeRunDataSpec(Spec):
    """``data=probe_run``: the replies of a CoBia, FairMT-Bench or text-mode FairDialogue run.
    ``turns`` picks FairMT's replies: those its judge read (``judged``) or all five."""

    kind: Literal["probe_run"]
    path: str
    turns: Literal["judged", "all"]

    @model_validator(mode="after")
    def readable(self) -> ProbeRunDataSpec:
        if self.path in ("", "???"):
            raise ConfigError(f"data.path is required with data=probe_run: data.path=<{EXPECTED}>")
        if not Path(self.path).expanduser().exists():
            raise ConfigError(f"data.path={self.path}: no such file or directory (expected "
                              f"{EXPECTED})")
        if not responses_file(self.path).is_file():
            raise ConfigError(f"data.path={self.path}: no {RESPONSES} in it (expected {EXPECTED})")
        return self


class InspectLogDataSpec(Spec):
    """``data=inspect_log``: the replies of an Inspect run (a log file or a folder of logs)."""

    kind: Literal["inspect_log"]
    path: str
    turns: Literal["last", "all"]

    @model_validator(mode="after")
    def readable(self) -> InspectLogDataSpec:
        if self.path in ("", "???"):
            raise ConfigError(f"data.path is required with data=inspect_log: data.path=<"
                              f"{INSPECT_LOG}>")
        if not Path(self.path).expanduser().exists():
            raise ConfigError(f"data.path={self.path}: no such file or directory (expected "
                              f"{INSPECT_LOG})")
        return self
