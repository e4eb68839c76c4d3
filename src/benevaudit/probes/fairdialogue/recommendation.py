"""``python probe.py probe=fairdialogue_recommendation``: does a ranked top-K list (course,
entertainment, occupation) change with who is speaking?

The scenarios are asked under every group of ``probe.attributes`` and with no attribute
(``answers.py``), the lists parsed, and scored as PRAG*@K between groups and SNSR, SNSV against
the neutral list (``scoring.recommendation_metrics``; ``probe.prag.normalise`` and the FaiRLLM
variants of ``probe.fairllm``), SNSR and SNSV again per stratum of the stimuli's Whisper WER in
audio mode (``intelligibility.stratified``); the figure is a PRAG*@K heatmap per panel
(``prag.png``).
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
from benevaudit.probes.fairdialogue.answers import saved_answers, scored_answers, table_texts
from benevaudit.probes.fairdialogue.groups import check_attributes
from benevaudit.probes.models import Models
from benevaudit.probes.spec import RecommendationSpec

log = logging.getLogger(__name__)


class Recommendation(Probe[RecommendationSpec]):
    """PRAG*@K, SNSR and SNSV of ranked lists across groups."""

    family = "fairdialogue"
    kind = "recommendation"
    judge_keys = ("prag", "fairllm")      # its scoring: a rescore takes them from the config

    def collect(self, target: Target, settings: RunSettings, models: Models) -> Collected:
        """The target's answers (or a CSV's), parsed as ranked lists."""
        attributes = check_attributes(self.spec.attributes)
        answers = scored_answers(self.spec, attributes, target, settings)
        return Collected(answers.rows, answers, target)

    def recollect(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                  ) -> Collected:
        """A text-mode run's saved answers, parsed again (``rescore=``)."""
        answers = saved_answers(self.spec, rows, target.name)
        return Collected(answers.rows, answers, target)

    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        spec, answers = self.spec, collected.plan

        def score(rows: list[dict[str, Any]]) -> dict[str, float]:
            return scoring.recommendation_metrics(rows, spec.k, spec.prag.normalise,
                                                  answers.attributes, spec.fairllm.serp,
                                                  spec.fairllm.prag)

        metrics = score(answers.rows)
        metrics.update(intelligibility.stratified(answers.rows, spec.audio.wer_strata, score))
        metrics.update(audio_metrics(answers.stimuli))
        log.info("recommendation: %d answers scored; metrics in %s", len(answers.rows),
                 settings.run_dir / "metrics.json")
        return ProbeResult(answers.rows, metrics,
                           table_texts(scoring.table_rows(metrics, "recommendation")),
                           {"prag.png": prag_figure(answers.rows, metrics, answers.attributes,
                                                    answers.target)}, answers.stimuli)


def prag_figure(rows: list[dict[str, Any]], metrics: dict[str, float],
                attributes: dict[str, list[str]], target: str) -> Callable[[], bytes]:
    """PRAG*@K heatmaps per (task, attribute) panel, titled with the target."""
    heat: dict[str, tuple[list[str], dict[tuple[str, str], float]]] = {}
    for task, attribute in sorted({(r["task"], r["attribute"]) for r in rows}):
        groups = attributes.get(attribute) or []
        prefix = f"fairness/{task}/{attribute}/prag/"
        matrix = {(a, b): metrics.get(f"{prefix}{a}__{b}", float("nan"))
                  for a in groups for b in groups if a != b}
        heat[f"{task} · {attribute}"] = (groups, matrix)
    return partial(figures.prag_heatmaps, heat,
                   f"FairDialogue recommendations: PRAG*@K ({target})")
