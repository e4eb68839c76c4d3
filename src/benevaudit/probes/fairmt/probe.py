"""``python probe.py probe=fairmt``: FairMT-Bench, fairness over five user turns with the
model's own replies in context (Fan et al., ICLR 2025), as its release runs it.

Flow: a clone of the release at ``probe.data.path`` (unset: the stand-in of ``stand_in.py``,
written to ``fairmt_stand_in/`` in the run directory, ``ran.stand_in`` in ``run.json``) → the tasks'
dialogues (``probe.data.set``, the first ``limit`` of each task file), their scripts read
with ``ast`` → the target in turn waves (every dialogue's turn 1, then every turn 2, …,
batched and through the request cache, each reply kept in its history) → the pre-filter and
the judge on the fifth reply (every reply under ``probe.judge_turns=all``) → ``fairmt/*``
metrics, ``table.csv``/``table.md`` and ``bias_by_turn.png``. ``probe.answers.path`` scores
replies made elsewhere instead of asking a target. With ``probe.judge_validation``, the judge
also reads its labelled items under each task's prompt (``judge_error``): its error
(``judge_validation/judge_<Task>/*``) and the task rates corrected for it. Everything is read
and checked before a model loads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from benevaudit.contained import check_inside
from benevaudit.llm import ChatModel, dry_run
from benevaudit.llm.base import Completion, NgramSampling, Sampling
from benevaudit.llm.batched import batched_chat
from benevaudit.llm.verdicts import Verdict
from benevaudit.errors import ConfigError
from benevaudit.probes.base import (Collected, Probe, ProbeResult, RunSettings, StandIn,
                                    Target)
from benevaudit.probes.fairmt import judge_error, sharing, tables
from benevaudit.probes.fairmt.answers import Answer, answer_tasks, log_answers, read_answers
from benevaudit.probes.fairmt.judging import (
    Judging, bias_judge, read_judging, refused, verdict_of,
)
from benevaudit.probes.fairmt.release import (
    STAGES, TURNS, Dialogue, load_task, locate, release_files,
)
from benevaudit.probes.fairmt.saved import saved_rows
from benevaudit.probes.fairmt.scoring import bias_metrics
from benevaudit.probes.fairmt.scripts import read_generation
from benevaudit.probes.fairmt.spec import FairMTSpec
from benevaudit.probes.fairmt.stand_in import stand_in_files
from benevaudit.probes.models import Models

log = logging.getLogger(__name__)
NGRAM_BACKENDS = ("hf",)          # backends whose decoding takes no_repeat_ngram_size


@dataclass
class Plan:
    """Everything read and checked before any model loads."""

    stand_in: bool
    dialogues: list[Dialogue]
    answers: list[Answer] | None       # probe.answers.path: replies made elsewhere
    judging: Judging
    systems: dict[str, str]            # dialogue id -> the judge's system prompt
    target_system: str | None          # the target's system prompt (None: none)
    turns: list[int]                   # judged turns, 1-based
    served: sharing.Served             # which dialogue's turn-k request serves each dialogue


class FairMT(Probe[FairMTSpec]):
    """FairMT-Bench's six tasks: five turns, the last reply (or every reply) judged."""

    family = "fairmt"

    judge_keys = ("judge", "judge_prompt", "judge_turns", "prefilter", "judge_validation")

    def collect(self, target: Target, settings: RunSettings, models: Models) -> Collected:
        """Every dialogue's five replies (the target's in turn waves, or an answers folder's)."""
        plan = prepare(self.spec, target, settings)
        rows = (answer_rows(plan.answers) if plan.answers is not None else
                converse(plan, models.get(target.llm), self.spec, settings))
        return Collected(rows, plan, target)

    def recollect(self, rows: list[dict[str, Any]], target: Target, settings: RunSettings
                  ) -> Collected:
        """A run's saved replies, matched to this block's dialogues by id."""
        plan = prepare(self.spec, target, settings)
        return Collected(saved_rows(rows, plan.dialogues), plan, target)

    def judge(self, collected: Collected, settings: RunSettings, models: Models) -> None:
        """The pre-filter and the judge on each judged turn, then the judge's checks on
        labelled items (the judge loads on first need)."""
        spec, plan = self.spec, collected.plan
        judge_rows(collected.rows, plan, spec, settings, lambda: models.get(spec.judge.llm))
        collected.judged = judge_error.check_judge(
            plan.judging, spec, settings.validation, lambda: models.get(spec.judge.llm),
            settings.seed, settings.progress)

    def score(self, collected: Collected, settings: RunSettings) -> ProbeResult:
        spec, plan, rows = self.spec, collected.plan, collected.rows
        checks, checked = collected.judged
        metrics = bias_metrics(rows, plan.turns, settings.seed)
        metrics.update(checks)
        metrics.update(judge_error.corrected_rates(rows, plan.turns, checked, settings.seed))
        log.info("FairMT%s: %d dialogues judged; outputs in %s",
                 " on STAND-IN DATA" * plan.stand_in, len(rows), settings.run_dir)
        name = (collected.target.name if plan.answers is None else
                f"answers:{Path(str(spec.answers.inspect_log or spec.answers.path)).name}")
        figure = partial(tables.turn_figure, tables.by_turn(metrics),
                         f"FairMT-Bench bias rate by turn ({name})")
        return ProbeResult(rows, metrics, tables.texts(metrics, name, plan.stand_in),
                           {"bias_by_turn.png": figure},
                           ran=what_ran(spec, plan, collected.target))

    def stand_in(self) -> StandIn | None:
        """The invented clone (``fairmt_stand_in/``) where ``probe.data.path`` is unset."""
        return None if self.spec.data.path else StandIn("fairmt_stand_in", stand_in_files())

    def inputs(self, settings: RunSettings) -> dict[str, tuple[str, list[Path]]]:
        """The clone's files the run reads (``release``) and an answers folder's files
        (``answers``); the stand-in, written by the run itself, is not an input."""
        spec = self.spec
        if not spec.data.path:
            return {}
        root = locate(spec.data.path)
        tasks: list[str] = list(dict.fromkeys(spec.tasks))
        out: dict[str, tuple[str, list[Path]]] = {}
        if spec.answers.path:
            folder = Path(spec.answers.path).expanduser()
            tasks = answer_tasks(folder, tasks)
            check_inside(folder, [f"{t}.json" for t in tasks], "probe.answers.path")
            out["answers"] = ("fairmt_answers", [folder / f"{t}.json" for t in tasks])
        paper = spec.judge_prompt == "paper"
        return {"release": (f"fairmt_{spec.data.set}",
                            release_files(root, tasks, spec.data.set, paper)), **out}


def root_of(spec: FairMTSpec, stand_in: Path | None) -> tuple[Path, bool]:
    """The clone, or the stand-in written into the run directory (no ``probe.data.path``),
    and which it is."""
    if spec.data.path:
        return locate(spec.data.path), False
    if stand_in is None:
        raise ConfigError("probe.data.path is not set and no stand-in was written for the run")
    root = stand_in
    log.warning("STAND-IN DATA: probe.data.path is not set, so this run reads the stand-in "
                "written to %s (invented groups and harmless traits, not FairMT-Bench; its rates "
                "say nothing about the target's biases). For the study, set probe.data.path to "
                "a clone of github.com/FanZT6/FairMT-bench", root)
    return root, True


def prepare(spec: FairMTSpec, target: Target, settings: RunSettings) -> Plan:
    """Read the data, the answers, the scripts and every judge prompt, in that order."""
    root, stand_in = root_of(spec, settings.stand_in)
    tasks: list[str] = list(dict.fromkeys(spec.tasks))
    answers = None
    if spec.answers.inspect_log:       # an Inspect run of benevaudit/fairmt
        release = [d for t in tasks for d in load_task(root, t, spec.data.set, None)]
        answers = log_answers(spec.answers.inspect_log, release, settings.limit)
        tasks = [t for t in tasks if any(a.dialogue.task == t for a in answers)]
        dialogues = [a.dialogue for a in answers]
    elif spec.answers.path:
        folder = Path(spec.answers.path).expanduser()
        tasks = answer_tasks(folder, tasks)
        answers = [a for t in tasks for a in read_answers(
            folder, t, load_task(root, t, spec.data.set, None), spec.data.set, settings.limit)]
        dialogues = [a.dialogue for a in answers]
    else:
        dialogues = [d for t in tasks for d in load_task(root, t, spec.data.set, settings.limit)]
    judging = read_judging(root, tasks, spec.judge_prompt)
    systems = {d.id: judging.system(d) for d in dialogues}
    generation = read_generation(root)
    model = str(target.llm.model or "")
    skip = spec.system_prompt == "none" or (spec.system_prompt == "auto" and any(
        n in model for n in generation.without_system))
    turns = list(range(1, TURNS + 1)) if spec.judge_turns == "all" else [TURNS]
    log.info("FairMT-%s: %d dialogues over %s; target system prompt: %s; judge prompt: %s; "
             "judged turns %s", spec.data.set.upper(), len(dialogues), tasks,
             "none" if skip else f"the release's ({len(generation.system)} characters)",
             spec.judge_prompt, turns)
    return Plan(stand_in, dialogues, answers, judging, systems,
                None if skip else generation.system, turns, sharing.served(dialogues))


def target_sampling(spec: FairMTSpec, seed: int) -> Sampling:
    s = spec.sampling
    return NgramSampling(temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens,
                         seed=seed, no_repeat_ngram_size=s.no_repeat_ngram_size)


def converse(plan: Plan, model: ChatModel, spec: FairMTSpec, settings: RunSettings
             ) -> list[dict[str, Any]]:
    """The five turns in waves: every dialogue's turn k in one batched call, each reply
    appended to its history before turn k + 1 (so the cache resumes a run wave by wave); a
    turn that dialogues share is one request (``sharing``)."""
    sampling = target_sampling(spec, settings.seed)
    head = [{"role": "system", "content": plan.target_system}] if plan.target_system else []
    histories = [list(head) for _ in plan.dialogues]
    replies: list[list[Completion]] = [[] for _ in plan.dialogues]
    for k in range(TURNS):
        for history, d in zip(histories, plan.dialogues, strict=True):
            history.append({"role": "user", "content": d.turns[k]})
        with dry_run.scope(turn=k + 1):
            senders, identities = sharing.expected_wave(plan.dialogues, plan.served, k + 1)
            dry_run.expect(identities, [histories[i] for i in senders])
            wave = batched_chat(model, [list(h) for h in histories], sampling,
                                progress=settings.progress, desc=f"turn {k + 1}")
        for history, mine, reply in zip(histories, replies, wave, strict=True):
            history.append({"role": "assistant", "content": reply.text})
            mine.append(reply)
    return [{**identity(d), "target_system": plan.target_system is not None,
             **{f"prompt_{k + 1}": d.turns[k] for k in range(TURNS)},
             **{f"reply_{k + 1}": r.text for k, r in enumerate(mine)},
             **{f"finish_{k + 1}": r.finish_reason for k, r in enumerate(mine)}}
            for d, mine in zip(plan.dialogues, replies, strict=True)]


def identity(d: Dialogue) -> dict[str, Any]:
    return {"id": d.id, "task": d.task, "stage": STAGES[d.task], "type": d.type,
            "dimension": d.dimension, "index": d.index}


def answer_rows(answers: list[Answer]) -> list[dict[str, Any]]:
    """Rows of replies made elsewhere, with any evaluation they carry (``given_<k>``)."""
    return [{**identity(a.dialogue), "target_system": None,
             **{f"prompt_{k + 1}": a.dialogue.turns[k] for k in range(TURNS)},
             **{f"reply_{k + 1}": a.replies[k] for k in range(TURNS)},
             **{f"given_{k + 1}": a.evaluations[k] for k in range(TURNS)}} for a in answers]


def judge_rows(rows: list[dict[str, Any]], plan: Plan, spec: FairMTSpec,
               settings: RunSettings, judge: Callable[[], ChatModel]) -> None:
    """Each judged turn's verdict on every row: a given evaluation, the pre-filter's, or the
    judge's (one batched wave per turn; ``judge()`` loads the judge on first need)."""
    for k in plan.turns:
        asked = []
        for i, (row, d) in enumerate(zip(rows, plan.dialogues, strict=True)):
            script = plan.judging.scripts[d.task]
            given, reply = row.pop(f"given_{k}", None), row[f"reply_{k}"]
            pre = given is None and spec.prefilter and refused(reply, script.phrases)
            row[f"prefiltered_{k}"] = bool(pre)
            row[f"source_{k}"] = "answers" if given is not None else "prefilter" if pre else "judge"
            row[f"evaluation_{k}"] = given if given is not None else (
                script.prefilter_verdict if pre else None)
            if given is None and not pre:
                asked.append(i)
        if asked:
            replies = [rows[i][f"reply_{k}"] for i in asked]
            for i, out in zip(asked, ask_judge(plan, spec, settings, judge, k, asked, replies),
                              strict=True):
                rows[i][f"evaluation_{k}"] = out.raw
        for row in rows:
            row[f"verdict_{k}"] = verdict_of(row[f"evaluation_{k}"])
    for row in rows:
        for k in range(1, TURNS + 1):
            row.pop(f"given_{k}", None)
        row["verdict"], row["evaluation"] = row[f"verdict_{TURNS}"], row[f"evaluation_{TURNS}"]


def ask_judge(plan: Plan, spec: FairMTSpec, settings: RunSettings,
              judge: Callable[[], ChatModel], k: int, asked: list[int],
              replies: list[str]) -> list[Verdict]:
    """The judge's replies at turn ``k`` to the dialogues ``asked`` (positions), one batched
    wave; each request reads the reply of the turn-k request that served its dialogue."""
    dialogues = [plan.dialogues[i] for i in asked]
    systems = [plan.systems[d.id] for d in dialogues]
    bias = bias_judge(plan.systems, spec.judge, settings.seed, judge)
    conversations = bias.requests(list(zip(dialogues, replies, strict=True)))
    identities: list[dict[str, Any]] = [
        {"id": d.id, "task": d.task, "turn": k, "judge": "bias"} for d in dialogues]
    keys = None                          # replies made elsewhere: the same text, one request
    if plan.answers is None:
        keys = sharing.judge_keys(systems, [plan.served[k - 1][i] for i in asked])
        for ident, i in zip(identities, asked, strict=True):
            ident["reads"] = sharing.target_identity(plan.dialogues, plan.served, k, i)
    if keys is None:
        keys = [json.dumps(c, sort_keys=True, ensure_ascii=False) for c in conversations]
    sent = sharing.firsts(keys)
    dry_run.expect([identities[j] for j in sent], [conversations[j] for j in sent])
    return bias.read(conversations, 16, settings.progress, keys=keys)


def what_ran(spec: FairMTSpec, plan: Plan, target: Target) -> dict[str, object]:
    """What the run settled as it ran (``run.json``'s ``ran``): the stand-in or the release,
    where the replies came from, whether the target had a system turn, and the n-gram block
    size applied (0: none, where the backend has no such option)."""
    backend = str(target.llm.backend)
    size = spec.sampling.no_repeat_ngram_size
    honoured = plan.answers is None and size is not None and backend in NGRAM_BACKENDS
    if plan.answers is None and size and not honoured:
        log.warning("no_repeat_ngram_size=%d is honoured by the %s backend only; %s has no such "
                    "option, so its replies decode without it (a departure from the release)",
                    size, "/".join(NGRAM_BACKENDS), backend)
    answers = spec.answers.inspect_log or spec.answers.path
    return {"stand_in": plan.stand_in,
            "answers": str(answers) if plan.answers is not None and answers else None,
            "target_system_prompt": plan.target_system is not None,
            "no_repeat_ngram_size": int(size) if honoured and size else 0}
