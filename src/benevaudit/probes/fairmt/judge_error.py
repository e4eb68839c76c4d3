"""FairMT-Bench's judge on the labelled items of ``probe.judge_validation``, and the bias rates
corrected for its error (:mod:`benevaudit.probes.judge_validation`).

Each task's script gives the judge a prompt of its own, so the judge is checked once per task
(``judge_validation/judge_<Task>/*``), the way it judges that task's replies: the pre-filter
first (under ``probe.prefilter``, a reply holding one of the script's refusal phrases is not
biased and asks no judge), then the script's system prompt with its ``[toxic sentence]`` filled
by the item's context (the user turns, where the script fills in the view the dialogue's turns
voice), the reply as the user message, and the verdict read as the probe reads it (yes, no,
else invalid). Under ``probe.judge_prompt=paper`` the paper's template stands for every task's,
as it does in the probe. A dry run records these requests with ``judge_validation: true``.

Corrected: ``fairmt/<Task>/bias_rate`` and ``fairmt/<Task>/turn_<k>/bias_rate`` with that
task's judge, where the probe's judge gave the verdicts (not replies scored with their own
evaluations, ``probe.answers``); ``fairmt/mean/bias_rate`` (and per turn) as the mean of the
tasks' corrected rates. A type or dimension pools tasks whose prompts differ, so no one
judge's error applies to it: those rates stay raw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benevaudit.llm import ChatModel, dry_run
from benevaudit.llm.base import Conversation
from benevaudit.llm.judge import Judge, Reading
from benevaudit.metrics.correction import corrected_metrics
from benevaudit.probes.fairmt.judging import (
    BIASED, INVALID, SLOT, Judging, judge_sampling, parse_verdict, refused, verdict_of,
)
from benevaudit.probes.fairmt.release import TASKS, TURNS
from benevaudit.probes.fairmt.scoring import counts
from benevaudit.probes.fairmt.spec import FairMTSpec
from benevaudit.probes.judge_validation import (
    Validated, ValidationItem, corrected, corrected_mean, name_seed, validate,
)

Row = dict[str, Any]


def judge_name(task: str) -> str:
    """The judge under ``task``'s prompt, as ``judge_validation/<judge>/*`` names it."""
    return f"judge_{task}"


def validation_system(judging: Judging, task: str, context: str) -> str:
    """The judge's system prompt for one item under ``task``'s script."""
    if judging.paper is not None:
        return judging.paper.replace(SLOT, context)
    script = judging.scripts[task]
    return script.system.replace(SLOT, context) if script.has_slot else script.system


def check_judge(judging: Judging, spec: FairMTSpec, items: Sequence[ValidationItem],
                judge: Callable[[], ChatModel], seed: int, progress: bool
                ) -> tuple[dict[str, float], dict[str, Validated]]:
    """Each task's ``judge_validation/judge_<Task>/*`` metrics and verdicts; the judge asked in
    one batched wave (``judge()`` loads it on first need)."""
    if not items:
        return {}, {}
    verdicts: dict[str, list[str]] = {}
    asked: list[tuple[str, int]] = []
    conversations: list[Conversation] = []
    for task, script in judging.scripts.items():
        verdicts[task] = [INVALID] * len(items)
        for i, item in enumerate(items):
            if spec.prefilter and refused(item.text, script.phrases):
                verdicts[task][i] = verdict_of(script.prefilter_verdict)
                continue
            asked.append((task, i))
            conversations.append([
                {"role": "system", "content": validation_system(judging, task, item.context)},
                {"role": "user", "content": item.text}])
    if conversations:
        dry_run.expect([{"id": items[i].id, "task": task, "judge": "bias",
                         "judge_validation": True} for task, i in asked], conversations)
        bias: Judge[Conversation] = Judge("bias", judge, list, Reading.text(
            parse_verdict, judge_sampling(spec.judge, seed)))
        for (task, i), v in zip(asked, bias.read(conversations, 16, progress, once=True),
                                strict=True):
            verdicts[task][i] = verdict_of(v.raw)
    metrics: dict[str, float] = {}
    checked: dict[str, Validated] = {}
    for task, found in verdicts.items():
        flags = [None if v == INVALID else v == BIASED for v in found]
        part, checked[task] = validate(judge_name(task), items, flags)
        metrics.update(part)
    return metrics, checked


def judged_here(rows: Sequence[Row], turn: int) -> bool:
    """Whether the probe's judge (or its pre-filter) gave every verdict at ``turn``, none read
    from an answers folder's own evaluations."""
    return all(r.get(f"source_{turn}") != "answers" for r in rows)


def corrected_rates(rows: Sequence[Row], turns: Sequence[int], checked: dict[str, Validated],
                    seed: int) -> dict[str, float]:
    """``<rate>_corrected`` (+ interval) beside each task's rate (per turn too, with every
    reply judged) and beside the mean over tasks."""
    if not checked:
        return {}
    by_task = {t: [r for r in rows if r["task"] == t] for t in TASKS
               if t in checked and any(r["task"] == t for r in rows)}
    per_turn = list(turns) if len(turns) > 1 else []
    out: dict[str, float] = {}
    for task, mine in by_task.items():
        cells = {f"fairmt/{task}/bias_rate": counts(mine)} if judged_here(mine, TURNS) else {}
        cells.update({f"fairmt/{task}/turn_{k}/bias_rate": counts(mine, k) for k in per_turn
                      if judged_here(mine, k)})
        out.update(corrected(cells, judge_name(task), checked[task], seed))
    every = len(by_task) == len({r["task"] for r in rows})
    for k, name in [(TURNS, "fairmt/mean/bias_rate"),
                    *[(k, f"fairmt/mean/turn_{k}/bias_rate") for k in per_turn]]:
        cells_k = [(*counts(mine, k), checked[task]) for task, mine in by_task.items()
                   if counts(mine, k)[1] > 0]
        mean = (corrected_mean(cells_k, name_seed(seed, name))
                if every and all(judged_here(m, k) for m in by_task.values()) else None)
        if mean is not None:
            out.update(corrected_metrics(name, mean))
    return out
