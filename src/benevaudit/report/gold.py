"""Which runs scored human-labelled ("gold") data rather than the synthetic corpus.

Kept apart from the sections so that ``detection`` and ``finetune_audit`` can hand their gold
runs to the External validity section, which in turn reads their labels, without an import
cycle between section modules.
"""

from __future__ import annotations

from benevaudit.gold import GOLD_KINDS
from benevaudit.report.runs import Run


def is_gold(run: Run) -> bool:
    """True when the run's test data is human-labelled: its scores speak to external validity,
    not to the corpus, so corpus tables must not average them with corpus runs."""
    return run.settings.data_kind in GOLD_KINDS
