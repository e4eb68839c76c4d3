"""Reading a clone of the FairMT-Bench release (``FanZT6/FairMT-bench``) at run time.

The release is read where the user keeps it and never copied: FairMT-1K is
``FairMT_1K/<Task>.json`` (a list of records mapping ``"0"``…``"4"`` to the five user turns),
FairMT-10K is ``FairMT_10K/{Stereotype,Toxicity}/<Task>/prompt_<dimension>.json`` (the same
turns under ``"0-turn Conv"``…``"4-turn Conv"``). 1K carries no type or dimension; each of its
dialogues equals exactly one 10K dialogue of its task, and that join supplies both.

Errors name the file, the record's position and the missing key, never a turn's text: the
data holds slurs. A symlink in the clone that points out of it is refused before anything is
read (its text would reach the target and the judge).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benevaudit.contained import check_inside
from benevaudit.errors import ConfigError, InputError

TASKS: tuple[str, ...] = ("Anaphora_Ellipsis", "Scattered_Questions", "Jailbreak_Tips",
                          "Interference_Misinformation", "Negative_Feedback", "Fixed_Format")
# the release's evaluation script of each task, under its legacy name
SCRIPTS: dict[str, str] = {
    "Anaphora_Ellipsis": "evaluation_coreference.py",
    "Scattered_Questions": "evaluation_separate_input.py",
    "Jailbreak_Tips": "evaluation_coa_attack.py",
    "Interference_Misinformation": "evaluation_error_info_answer.py",
    "Negative_Feedback": "evaluation_perturbation_prompt.py",
    "Fixed_Format": "evaluation_fixed_task_template.py",
}
STAGES: dict[str, str] = {
    "Anaphora_Ellipsis": "context understanding", "Scattered_Questions": "context understanding",
    "Jailbreak_Tips": "interaction fairness", "Interference_Misinformation": "interaction fairness",
    "Negative_Feedback": "fairness trade-off", "Fixed_Format": "fairness trade-off",
}
TYPES: tuple[str, ...] = ("Stereotype", "Toxicity")
TURNS = 5
KEYS_1K = tuple(str(i) for i in range(TURNS))
KEYS_10K = tuple(f"{i}-turn Conv" for i in range(TURNS))
GENERATOR = "generate_answer.py"
PAPER_SCRIPT = "evaluation_perturbation_prompt.py"    # holds the paper's judge prompt


@dataclass(frozen=True)
class Dialogue:
    """One dialogue: its five user turns, where it sits, and its type and dimension."""

    id: str                    # <Task>/<set>/<position>
    task: str
    index: int                 # position in its task file (1K) or in the task's 10K files
    turns: tuple[str, ...]     # [5] user turns
    type: str                  # stereotype | toxicity
    dimension: str             # age, appearance, disable, gender, race, religion


def locate(path: str | Path) -> Path:
    """The clone's root; anything that is not one is an error saying what a clone holds."""
    root = Path(path).expanduser()
    lacking = [p for p in ("FairMT_1K", "FairMT_10K", "code") if not (root / p).is_dir()]
    lacking += [f"code/{s}" for s in sorted(set(SCRIPTS.values()))
                if not (root / "code" / s).is_file()]
    if lacking:
        raise ConfigError(f"probe.data.path={root}: not a clone of FanZT6/FairMT-bench (lacks "
                          f"{', '.join(lacking[:4])}{' ...' if len(lacking) > 4 else ''}; "
                          "expected FairMT_1K/, FairMT_10K/ and code/evaluation_*.py)")
    check_inside(root, ("FairMT_1K", "FairMT_10K", "code"), "a clone of FairMT-bench")
    return root


def read_json_list(file: Path, what: str) -> list[Any]:
    """A JSON file holding a list, or an error naming the file."""
    if not file.is_file():
        raise InputError(f"{file}: no such file (expected {what})")
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{file}: not JSON ({type(e).__name__} at position "
                         f"{getattr(e, 'pos', '?')}; expected {what})") from None
    if not isinstance(value, list):
        raise InputError(f"{file}: holds a JSON {type(value).__name__}, expected {what}")
    return value


def turns_of(record: Any, keys: tuple[str, ...], file: Path, position: int) -> tuple[str, ...]:
    """The five user turns of one record, or an error naming the file, position and key."""
    if not isinstance(record, dict):
        raise InputError(f"{file} record {position}: a JSON {type(record).__name__}, expected "
                         f"an object with keys {list(keys)}")
    for key in keys:
        if key not in record:
            raise InputError(f"{file} record {position}: no turn {key!r} (expected keys "
                             f"{list(keys)})")
        if not isinstance(record[key], str) or not record[key].strip():
            raise InputError(f"{file} record {position}: turn {key!r} is not a non-empty string")
    return tuple(record[k] for k in keys)


def tenk_files(root: Path, task: str) -> list[tuple[str, str, Path]]:
    """(type, dimension, file) of a task's 10K files, in a fixed order."""
    out = []
    for kind in TYPES:
        for file in sorted((root / "FairMT_10K" / kind / task).glob("prompt_*.json")):
            out.append((kind.lower(), file.stem.removeprefix("prompt_"), file))
    if not out:
        raise InputError(f"{root / 'FairMT_10K'}: no {task} files (expected "
                         f"<Stereotype|Toxicity>/{task}/prompt_<dimension>.json)")
    return out


def load_10k(root: Path, task: str) -> list[Dialogue]:
    """Every 10K dialogue of a task, in file order (Stereotype first, dimensions sorted)."""
    out: list[Dialogue] = []
    for kind, dimension, file in tenk_files(root, task):
        what = "a list of dialogues keyed '0-turn Conv'…'4-turn Conv'"
        for position, record in enumerate(read_json_list(file, what)):
            out.append(Dialogue(f"{task}/10k/{len(out)}", task, len(out),
                                turns_of(record, KEYS_10K, file, position), kind, dimension))
    return out


def load_task(root: Path, task: str, which: str, limit: int | None) -> list[Dialogue]:
    """A task's dialogues from ``which`` set (``1k`` or ``10k``), the first ``limit`` in file
    order; 1K dialogues take their type and dimension from the 10K dialogue they equal."""
    tenk = load_10k(root, task)
    if which == "10k":
        return tenk[:limit]
    file = root / "FairMT_1K" / f"{task}.json"
    records = read_json_list(file, "a list of records keyed '0'…'4'")
    index: dict[tuple[str, ...], list[Dialogue]] = {}
    for d in tenk:
        index.setdefault(d.turns, []).append(d)
    out = []
    for position, record in enumerate(records[:limit]):
        turns = turns_of(record, KEYS_1K, file, position)
        found = index.get(turns, [])
        if len({(d.type, d.dimension) for d in found}) != 1:
            raise InputError(f"{file} record {position}: equals {len(found)} FairMT-10K "
                             f"dialogues of {task} (expected exactly one, which gives its type "
                             "and dimension)")
        out.append(Dialogue(f"{task}/1k/{position}", task, position, turns, found[0].type,
                            found[0].dimension))
    return out


def release_files(root: Path, tasks: list[str], which: str, paper: bool) -> list[Path]:
    """Every file of the clone a run over ``tasks`` reads: each task's 1K file (``which`` 1k),
    its 10K files (1K joins them for type and dimension), its evaluation script, the
    generation script, and under the paper's prompt the script that holds it."""
    files = [f for t in tasks for f in (
        ([root / "FairMT_1K" / f"{t}.json"] if which == "1k" else [])
        + [file for _, _, file in tenk_files(root, t)] + [root / "code" / SCRIPTS[t]])]
    files.append(root / "code" / GENERATOR)
    if paper:
        files.append(root / "code" / PAPER_SCRIPT)
    return sorted(set(files))
