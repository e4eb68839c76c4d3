"""Text interventions of the fine-tuning audit: P, M, SH, F, S, the random-mask control, none.

Each intervention is a pure function of (input table, params, seed) over Arrow record
batches; ``run_interventions`` applies a sequence of them and returns the edited table with
the figures for ``metrics.json``. One module per intervention: ``intervention=mask`` is
:mod:`.mask`.
"""

from benevaudit.audit.interventions.registry import (
    INTERVENTIONS,
    SHORT_CODES,
    build,
    code_for,
    name_for,
    steps_from_config,
    steps_of,
)
from benevaudit.audit.interventions.runner import run_interventions

__all__ = ["INTERVENTIONS", "SHORT_CODES", "build", "code_for", "name_for", "run_interventions",
           "steps_from_config", "steps_of"]
