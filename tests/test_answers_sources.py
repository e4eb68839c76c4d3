"""Where a probe's answers come from: one source at a time, and none for a protocol that
needs a live target (no inspect-ai needed: the blocks are refused before any log is read)."""

from __future__ import annotations

import pytest
from test_inspect import compose_run

from benevaudit.errors import BenevauditError
from benevaudit.pipelines.config import validated
from benevaudit.pipelines.probe import ProbeRun


@pytest.mark.parametrize("probe, overrides, message", [
    ("fairdialogue_decision", ["probe.answers.path=a.csv", "probe.answers.inspect_log=logs"],
     "both set; give one source of answers"),
    ("fairdialogue_feedback", ["probe.answers.inspect_log=logs"],
     "inspect_log works with fairdialogue_decision"),
])
def test_a_second_source_or_a_log_for_feedback_is_refused(tmp_path, probe, overrides, message):
    cfg = compose_run("probe", tmp_path, "run", f"probe={probe}", *overrides)
    with pytest.raises(BenevauditError, match=message):
        validated(ProbeRun, cfg)


@pytest.mark.parametrize("probe", ["cobia_hcc", "fairdialogue_recommendation"])
def test_a_log_of_answers_loads_no_target(tmp_path, probe):
    run = validated(ProbeRun, compose_run("probe", tmp_path, "run", f"probe={probe}",
                                          "probe.answers.inspect_log=logs"))
    assert not run.probe.asks_target()
    run = validated(ProbeRun, compose_run("probe", tmp_path, "run", f"probe={probe}"))
    assert run.probe.asks_target()
