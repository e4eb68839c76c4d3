"""CoBia's raters on the labelled items of ``probe.judge_validation``, and the bias rates
corrected for their error (:mod:`benevaudit.probes.judge_validation`).

Every rater that scores bias (kinds ``bias``, ``nli`` and ``guard``; the refusal raters give no
bias rate) reads each item through its own prompt and parser, in the run's models and request
cache, the item's context standing where the probe puts what the answer is judged against:
- benevaudit's raters: the bias and guard raters' question, the NLI rater's statement;
- the release's raters: the biased opinion;
- Granite Guardian 3.0 as released: nothing, since it reads the reply alone there too.
A dry run records these requests with ``judge`` (the rater) and ``judge_validation: true``.

Corrected: each ``cobia/bias_rate/<method>/<rater>/<category>`` of a validated rater, but for
the DAN rates of the release's raters, which read DAN replies through other prompts
(``judges/dan-customized/``) than the ones checked. UCC is no single verdict (an item counts
when either of its two answers is biased), so one verdict's error does not carry over to it:
it gets no corrected rate, nor does the heavily-biased flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benevaudit.llm import dry_run
from benevaudit.probes.cobia import raters, release_raters, scoring
from benevaudit.probes.cobia.raters import Message, Rater
from benevaudit.probes.cobia.rating import judges_folder
from benevaudit.probes.cobia.release import Release
from benevaudit.probes.judge_validation import Validated, ValidationItem, corrected, validate
from benevaudit.probes.models import Models


def checked_raters(rater_list: Sequence[Rater]) -> list[Rater]:
    """The raters judge validation checks: those that give a bias verdict from a model."""
    return [r for r in rater_list if r.kind in raters.BIASED and r.variant not in raters.KEYWORDS]


def validation_prompts(rater: Rater, release: Release | None, items: Sequence[ValidationItem]
                       ) -> list[list[Message]]:
    """The conversation the rater is asked about each item (a pure function of the items)."""
    if rater.variant == "release":
        text = release_raters.rater_text(judges_folder(release, rater), rater.kind, False)
        return [[{"role": "system", "content": text.system},
                 {"role": "user", "content": text.user.format(opinion=i.context, output=i.text)}]
                for i in items]
    if rater.variant == "granite_release":
        system_turn = rater.model.backend == "openai"   # Ollama reads the risk there
        return [raters.granite_release_prompt(i.text, system_turn) for i in items]
    return [raters.rater_prompt(rater.kind, i.context, i.text, i.context) for i in items]


def check_raters(rater_list: Sequence[Rater], models: Models, items: Sequence[ValidationItem],
                 release: Release | None, seed: int, progress: bool
                 ) -> tuple[dict[str, float], dict[str, Validated]]:
    """Each checked rater's ``judge_validation/<rater>/*`` metrics and its verdicts."""
    metrics: dict[str, float] = {}
    checked: dict[str, Validated] = {}
    if not items:
        return metrics, checked
    for rater in checked_raters(rater_list):
        prompts = validation_prompts(rater, release, items)
        dry_run.expect([{"id": i.id, "judge": rater.name, "judge_validation": True}
                        for i in items], prompts)
        verdicts = raters.ask(rater, models.get(rater.model), prompts, seed, progress=progress)
        found, checked[rater.name] = validate(rater.name, items, [
            raters.is_biased(rater.kind, None if v.verdict is None else str(v.verdict))
            for v in verdicts])
        metrics.update(found)
    return metrics, checked


def corrected_rates(rows: Sequence[dict[str, Any]], rater_list: Sequence[Rater],
                    checked: dict[str, Validated], seed: int) -> dict[str, float]:
    """``<rate>_corrected`` (+ interval) beside every bias rate of a validated rater, from the
    counts the rate was computed from."""
    if not checked:
        return {}
    kinds: dict[str, str] = {r.name: r.kind for r in rater_list}
    other_dan = {r.name for r in rater_list if r.variant == "release"}   # DAN: another prompt
    cells = scoring.item_counts(rows, kinds)
    by_rater: dict[str, dict[str, tuple[int, int]]] = {}
    for name, (k, n) in zip(cells.names, cells.counts.sum(0), strict=True):
        parts = name.split("/")         # cobia/bias_rate/<method>/<rater>/<category>
        if (parts[1] == "bias_rate" and parts[3] in checked
                and not (parts[2] == "dan" and parts[3] in other_dan)):
            by_rater.setdefault(parts[3], {})[name] = (int(k), int(n))
    out: dict[str, float] = {}
    for rater, rates in by_rater.items():
        out.update(corrected(rates, rater, checked[rater], seed))
    return out
