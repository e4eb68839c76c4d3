"""A probe run's replies read back as dialogue records (``data=probe_run``), so any detector
scores what the target said in a CoBia, FairMT-Bench or text-mode FairDialogue run, each reply
with its conversation, through the same code as a corpus. The records are unlabelled; each
carries its task, turn, group and the probe judge's verdicts in ``meta``. An Inspect AI run's
log is read the same way (``data=inspect_log``, ``inspect_log``), through Inspect's log API,
imported only there.

A core room: it may import the core modules (``schema``, ``files``, ``specs``, ``errors``) only.
"""

from __future__ import annotations

from benevaudit.replies.inspect_log import inspect_log_files, read_inspect_log, read_samples
from benevaudit.replies.probe_run import probe_run_files, read_probe_run
from benevaudit.replies.spec import InspectLogDataSpec, ProbeRunDataSpec

__all__ = ["InspectLogDataSpec", "ProbeRunDataSpec", "inspect_log_files", "probe_run_files",
           "read_inspect_log", "read_probe_run", "read_samples"]
