"""The target's spoken replies in the run directory: each WAV it sent back, as
``audio_out/<task>/<item>__<group>.wav`` (a feedback round's with ``__round-<r>``), the path
the row's ``reply_audio`` (or ``feedback_reply_audio``) names
(:func:`benevaudit.asr.replies.reply_path`).

The bytes are the target's, unchanged. A file already holding them (an earlier run in this
directory, answered from the request cache) is left as it is; every file is written whole.
"""

from __future__ import annotations

from pathlib import Path

from benevaudit.outputs.stimuli import write_bytes
from benevaudit.probes.fairdialogue.stimuli import Stimuli


def write_spoken_replies(run_dir: Path, stimuli: Stimuli | None) -> None:
    """Each spoken reply ``stimuli`` carries at its path under ``run_dir``; nothing for a
    target that answered in text."""
    for reply in stimuli.replies if stimuli is not None else ():
        write_bytes(run_dir / reply.path, reply.data)
