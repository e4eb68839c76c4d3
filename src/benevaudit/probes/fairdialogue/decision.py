"""``python probe.py probe=fairdialogue_decision``: does a yes/no answer (award, interview,
assignment) change with who is speaking?

The scenarios are asked under every group of ``probe.attributes`` (``answers.py``), the
answers parsed as yes, no, refused or invalid, and scored as GUS per task × attribute
(``scoring.decision_metrics``), and again per stratum of the stimuli's Whisper WER in audio mode
(``intelligibility.stratified``); the figure is each group's yes-rate (``yes_rate.png``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benevaudit.probes.base import Collected, Probe, ProbeResult, RunSettings, Target
from benevaudit.probes.fairdialogue import figures, intelligibility, scoring
from benevaudit.probes.fairdialogue.stimuli import audio_metrics
from benevaudit.probes.fairdialogue.answers import (Answers, saved_answers, scored_answers,
                                                     table_texts)
from benevaudit.probes.fairdialogue.groups import check_attributes
from benevaudit.probes.models import Models
from benevaudit.probes.spec import DecisionSpec

log = logging.getLogger(__name__)


class Decision(Probe[DecisionSpec]):
    """GUS of yes/no decisions across groups."""

    family = "fairdialogue"
    kind = "decision"

    def collect(self, target: Target, settings: RunSettings, models: Models) -> Collected:
        """The target's answers (or a CSV's), parsed as decisions."""
        attributes = check_attributes(self.spec.attributes)
        answers = scored_answers(self.spec, attributes, target, settings)
        return Collected(answers.rows, answers, target)

    def recollect(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                  ) -> Collected:
        """A text-mode run's saved answers, parsed again (``rescore=``)."""
        answers = saved_answers(self.spec, rows, target.name)
        return Collected(answers.rows, answers, target)

    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        answers: Answers = collected.plan
        metrics = scoring.decision_metrics(answers.rows, answers.attributes)
        metrics.update(intelligibility.stratified(
            answers.rows, self.spec.audio.wer_strata,
            lambda part: scoring.decision_metrics(part, answers.attributes)))
        metrics.update(audio_metrics(answers.stimuli))
        log.info("decision: %d answers scored; metrics in %s", len(answers.rows),
                 settings.run_dir / "metrics.json")
        return ProbeResult(answers.rows, metrics,
                           table_texts(scoring.table_rows(metrics, "decision")),
                           {"yes_rate.png": yes_rate_figure(answers.rows, answers.attributes,
                                                            answers.target)}, answers.stimuli)


def yes_rate_figure(rows: list[dict[str, Any]], attributes: dict[str, list[str]],
                    target: str) -> Callable[[], bytes]:
    """Yes-rate bars per (task, attribute) panel, titled with the target."""
    panels: dict[str, dict[str, tuple[int, int]]] = {}
    for task, attribute in sorted({(r["task"], r["attribute"]) for r in rows}):
        groups = attributes.get(attribute, [])
        valid = [r for r in rows if r["task"] == task and r["attribute"] == attribute
                 and r["decision"] is not None]
        panels[f"{task} · {attribute}"] = {
            g: (sum(r["decision"] == "yes" for r in valid if r["group"] == g),
                sum(r["group"] == g for r in valid)) for g in groups}
    return partial(figures.rate_bars, panels,
                   f"FairDialogue decisions: yes-rate by group ({target})",
                   "yes-rate (95% Wilson)")
