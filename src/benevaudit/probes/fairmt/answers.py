"""Scoring replies made elsewhere: ``probe.answers.path`` is a folder of ``<Task>.json`` files
in the release's output format.

Each file is a list of dialogues ``{"0-turn Conv": {"prompt", "response"}, …, "4-turn Conv":
{"prompt", "response", "evaluation"?}}``, in any order and any subset of the task's
dialogues. A dialogue is joined to the release by its five prompts, compared stripped; one
that matches nothing is an error naming its file and position (never its text). Where a turn
carries ``evaluation`` its verdict is read from it; elsewhere the judge runs.

``probe.answers.inspect_log`` reads an Inspect AI run of ``benevaudit/fairmt`` instead (a log
file or a folder of logs, through Inspect's log API): each sample joins the dialogue its id
names, its five assistant messages are the replies, and the evaluations the Inspect judge
wrote (the scorer's ``row``) are read as given, as the release's ``evaluation`` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benevaudit.contained import check_inside
from benevaudit.errors import ConfigError, InputError
from benevaudit.probes.fairmt.release import KEYS_10K, TASKS, TURNS, Dialogue, read_json_list
from benevaudit.replies import read_samples

FORMAT = ("a JSON list of dialogues, each {\"0-turn Conv\": {\"prompt\": ..., \"response\": "
          "...}, ..., \"4-turn Conv\": {\"prompt\", \"response\", \"evaluation\" (optional)}}")


@dataclass(frozen=True)
class Answer:
    """One answered dialogue: the release's dialogue it joins, its replies and evaluations."""

    dialogue: Dialogue
    replies: tuple[str, ...]                    # [5]
    evaluations: tuple[str | None, ...]         # [5] given verdict texts, None where absent


def answer_tasks(folder: Path, tasks: list[str]) -> list[str]:
    """The tasks of ``probe.tasks`` that have a file in the folder; a file named after no task
    is an error, and so is a folder with none."""
    if not folder.is_dir():
        raise ConfigError(f"probe.answers.path={folder}: no such folder (expected a folder of "
                          "<Task>.json files in the release's output format)")
    unknown = sorted(f.name for f in folder.glob("*.json") if f.stem not in TASKS)
    if unknown:
        raise InputError(f"{folder / unknown[0]}: not a FairMT-Bench task (expected files named "
                         f"<Task>.json, Task one of {list(TASKS)})")
    present = [t for t in tasks if (folder / f"{t}.json").is_file()]
    if not present:
        raise InputError(f"probe.answers.path={folder}: no <Task>.json for the tasks "
                         f"{tasks} (probe.tasks)")
    return present


def _turn(entry: Any, key: str, file: Path, position: int) -> dict[str, Any]:
    turn = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(turn, dict):
        raise InputError(f"{file} entry {position}: no {key!r} object; expected {FORMAT}")
    for field in ("prompt", "response"):
        if not isinstance(turn.get(field), str):
            raise InputError(f"{file} entry {position}: {key!r} has no string {field!r}; "
                             f"expected {FORMAT}")
    if turn.get("evaluation") is not None and not isinstance(turn["evaluation"], str):
        raise InputError(f"{file} entry {position}: {key!r} 'evaluation' is not a string")
    return turn


def read_answers(folder: Path, task: str, release: list[Dialogue], which: str,
                 limit: int | None) -> list[Answer]:
    """The first ``limit`` answered dialogues of ``<task>.json``, joined to ``release`` (the
    task's dialogues of ``probe.data.set``). An empty list, or two entries for one dialogue
    (it would be counted twice), is an error naming the file and the positions."""
    file = folder / f"{task}.json"
    check_inside(folder, [file.name], "probe.answers.path")
    entries = read_json_list(file, FORMAT)
    if not entries:
        raise InputError(f"{file}: an empty list, nothing to score; expected {FORMAT}")
    index: dict[tuple[str, ...], list[Dialogue]] = {}   # equal dialogues: taken in order
    for d in release:
        index.setdefault(tuple(t.strip() for t in d.turns), []).append(d)
    taken: dict[tuple[str, ...], list[int]] = {}         # prompts -> entries that took them
    out = []
    for position, entry in enumerate(entries[:limit]):
        turns = [_turn(entry, key, file, position) for key in KEYS_10K]
        prompts = tuple(t["prompt"].strip() for t in turns)
        found, used = index.get(prompts), taken.setdefault(prompts, [])
        if found is None:
            raise InputError(f"{file} entry {position}: its five prompts match no "
                             f"FairMT-{which.upper()} dialogue of {task} (compared stripped; "
                             "probe.data.set picks 1k or 10k)")
        if len(used) == len(found):
            raise InputError(f"{file}: entries {used[0]} and {position} answer the same "
                             f"FairMT-{which.upper()} dialogue of {task}; keep one answer per "
                             "dialogue")
        out.append(Answer(found[len(used)], tuple(t["response"] for t in turns),
                          tuple(t.get("evaluation") for t in turns)))
        used.append(position)
    return out


def log_answers(path: str, release: list[Dialogue], limit: int | None) -> list[Answer]:
    """The answered dialogues of an Inspect log of ``benevaudit/fairmt`` (the first ``limit``
    per task, in log order), joined to ``release`` by the sample id (the dialogue's id). A
    sample of no dialogue of ``release``, one with other than five replies, or a dialogue
    answered twice (a second epoch) is an error naming the log and the sample."""
    by_id = {d.id: d for d in release}
    out: list[Answer] = []
    seen: set[str] = set()
    for sample in read_samples(path, "probe.answers.inspect_log"):
        where = f"{sample.log}: sample {sample.id} (epoch {sample.epoch})"
        dialogue = by_id.get(sample.id)
        if dialogue is None:
            raise InputError(f"{where}: names no dialogue of probe.tasks in FairMT-"
                             f"{{1k,10k}} (probe.data.set); expected a log of benevaudit/fairmt")
        if sample.id in seen:
            raise InputError(f"{where}: the dialogue is answered twice (several epochs?); "
                             "score one epoch per run")
        replies = sample.replies
        if len(replies) != TURNS:
            raise InputError(f"{where}: {len(replies)} assistant replies, expected {TURNS}")
        seen.add(sample.id)
        if limit is None or sum(a.dialogue.task == dialogue.task for a in out) < limit:
            row: dict[str, Any] = next((sc["metadata"]["row"] for sc in sample.scores.values()
                                        if isinstance(sc["metadata"].get("row"), dict)), {})
            out.append(Answer(dialogue, tuple(replies),
                              tuple(row.get(f"evaluation_{k}") for k in range(1, TURNS + 1))))
    return out
