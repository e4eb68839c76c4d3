"""A probe run's ``responses.parquet`` as dialogue records: one per reply of the target.

The probe is told by the columns its rows carry:
- CoBia (``id``, ``method``, ``messages``, ``rated_response``): the conversation sent, then the
  reply its raters read (a DAN reply's jailbroken half); task = method, turn 1; the verdicts of
  its bias-scoring raters (``<rater>_verdict``; refusal raters give none);
- FairMT-Bench (``id``, ``task``, ``prompt_<k>``, ``reply_<k>``): user turn k after the earlier
  turns and replies, reply k last; task, turn k, group = the dimension; the judge's verdict at
  turn k (``verdict_<k>``). ``turns: judged`` keeps the replies the judge read, ``all`` all five;
- FairDialogue in text mode (``item``, ``task``, ``messages``, ``answer``): the request, then
  the first answer; task, turn 1, group; no judge (a parsed decision is no bias verdict). An
  audio run is refused: its group is heard, and its messages hold no text for it.

A system message is folded into the user turn after it (records have user and agent turns
only, and FairDialogue names the group there). Each record is unlabelled, its demographics
``unspecified``; ``meta`` holds ``probe``, ``task``, ``turn``, ``group``, ``judges`` ({rater: True
biased, False not, None invalid}) and ``reply_turn`` (the reply's index in ``turns``). Errors name
the file and row, never a turn's text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benevaudit.errors import InputError
from benevaudit.files import read_parquet, read_yaml
from benevaudit.replies.spec import ProbeRunDataSpec, responses_file
from benevaudit.schema import USER_FIELDS, Dialogue, Turn

COLUMNS = {"cobia": ("id", "method", "group", "messages", "rated_response"),
           "fairmt": ("id", "task", "dimension", "prompt_1", "reply_1"),
           "fairdialogue": ("item", "task", "attribute", "group", "messages", "answer")}
EXPECTED = ("the responses.parquet of a CoBia, FairMT-Bench or text-mode FairDialogue run "
            f"(columns {COLUMNS})")
# the bias-scoring verdicts of CoBia's raters (``probes.cobia.raters.BIASED`` and the rest of
# their labels); a refusal rater's refusal/compliance is no bias verdict
BIASED = frozenset({"biased", "enforces", "agrees", "yes"})
NOT_BIASED = frozenset({"not_biased", "neutral", "negates", "no"})
REFUSAL = frozenset({"refusal", "compliance"})
BIAS_KINDS = ("bias", "nli", "guard")
FAIRMT_TURNS = 5
UNSPECIFIED = {k: "unspecified" for k in USER_FIELDS}


def probe_run_files(spec: ProbeRunDataSpec) -> list[Path]:
    """The file the reader opens (its sha256 goes in the run's ``inputs.json``)."""
    return [responses_file(spec.path)]


def family_of(columns: list[str], where: str) -> str:
    for family, needed in COLUMNS.items():
        if set(needed) <= set(columns):
            return family
    raise InputError(f"{where}: expected {EXPECTED}; its columns are {sorted(columns)}")


def run_config(file: Path) -> dict[str, Any]:
    """The run's resolved Hydra config, where it was kept (``{}`` otherwise)."""
    path = file.parent / ".hydra" / "config.yaml"
    resolved = read_yaml(path) if path.is_file() else None
    return resolved if isinstance(resolved, dict) else {}


def block(tree: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``tree[keys[0]][keys[1]]…`` where each is a mapping, else ``{}``."""
    for key in keys:
        found = tree.get(key)
        tree = found if isinstance(found, dict) else {}
    return tree


def read_probe_run(spec: ProbeRunDataSpec) -> list[Dialogue]:
    """One unlabelled record per reply, in row order (per row, by turn)."""
    file = responses_file(spec.path)
    frame = read_parquet(file, "data.path", EXPECTED)
    family = family_of(list(frame.columns), str(file))
    rows = [{k: None if missing(v) else v for k, v in row.items()}
            for row in frame.to_dict("records")]
    config = run_config(file)
    target = str(block(config, "target").get("name") or "target")
    raters = bias_raters(rows, block(config, "probe", "judges"))
    out: list[Dialogue] = []
    for i, row in enumerate(rows):
        where = f"{file}: row {i}"
        replies = (cobia_replies(row, where, raters) if family == "cobia" else
                   fairmt_replies(row, where, spec.turns) if family == "fairmt" else
                   fairdialogue_replies(row, where))
        out += [record(family, target, reply) for reply in replies]
    if not out:
        raise InputError(f"{file}: no reply to score (expected {EXPECTED})")
    return out


def record(family: str, target: str, reply: dict[str, Any]) -> Dialogue:
    turns = (*reply["turns"], Turn("agent", text_of(reply["text"])))
    meta = {"source": "probe_run", "probe": family, "task": reply["task"],
            "turn": reply["turn"], "group": reply["group"], "judges": reply["judges"],
            "reply_turn": len(turns) - 1}
    return Dialogue(id=reply["id"], label=None, role=f"probe_{family}", generator=target,
                    user=dict(UNSPECIFIED), agent=None, turns=turns, meta=meta)


def text_of(value: Any) -> str:
    """A reply as text ("" for a missing one: the target said nothing)."""
    return value if isinstance(value, str) else ""


def conversation(raw: Any, where: str) -> list[Turn]:
    """The messages of a ``messages`` JSON column as user and agent turns."""
    try:
        messages = json.loads(raw)
    except (TypeError, ValueError):
        raise InputError(f"{where}: messages is not a JSON list of chat messages") from None
    turns: list[Turn] = []
    system: list[str] = []
    for message in messages if isinstance(messages, list) else [None]:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise InputError(f"{where}: a message holds no text (an audio run? data=probe_run "
                              "reads text-mode runs, where the group is stated)")
        role, content = message.get("role"), message["content"]
        if role == "system":
            system.append(content)
        elif role in ("user", "assistant"):
            text = "\n\n".join([*system, content]) if role == "user" else content
            system = [] if role == "user" else system
            turns.append(Turn("user" if role == "user" else "agent", text))
        else:
            raise InputError(f"{where}: a message's role is {role!r}, none of system, user, "
                             "assistant")
    return turns


def missing(value: Any) -> bool:
    """None, or the NaN pandas reads for a missing cell."""
    return value is None or (isinstance(value, float) and value != value)


def bias_raters(rows: list[dict[str, Any]], judges: dict[str, Any]) -> list[str]:
    """CoBia's ``<rater>_verdict`` columns of bias-scoring raters: by the kind the run's config
    gives each rater, else every column without a refusal rater's verdict."""
    columns = sorted({c for row in rows for c in row if c.endswith("_verdict")})
    kinds = {name: rater.get("kind") for name, rater in judges.items() if isinstance(rater, dict)}
    if kinds:
        return [c for c in columns if kinds.get(c.removesuffix("_verdict")) in BIAS_KINDS]
    return [c for c in columns if not any(row.get(c) in REFUSAL for row in rows)]


def cobia_replies(row: dict[str, Any], where: str, raters: list[str]) -> list[dict[str, Any]]:
    judges = {c.removesuffix("_verdict"): (None if row.get(c) not in BIASED | NOT_BIASED
                                           else row.get(c) in BIASED) for c in raters}
    return [{"id": f"{row['id']}/{row['method']}", "turns": conversation(row["messages"], where),
             "text": row["rated_response"], "task": str(row["method"]), "turn": 1,
             "group": str(row["group"]), "judges": judges}]


def fairmt_replies(row: dict[str, Any], where: str, turns: str) -> list[dict[str, Any]]:
    out = []
    history: list[Turn] = []
    for k in range(1, FAIRMT_TURNS + 1):
        prompt, reply = row.get(f"prompt_{k}"), row.get(f"reply_{k}")
        if not isinstance(prompt, str):
            raise InputError(f"{where}: prompt_{k} is not text")
        verdict = row.get(f"verdict_{k}")
        if turns == "all" or verdict is not None:
            judge = None if verdict not in ("biased", "not_biased") else verdict == "biased"
            out.append({"id": f"{row['id']}/turn_{k}", "turns": [*history, Turn("user", prompt)],
                        "text": reply, "task": str(row["task"]), "turn": k,
                        "group": str(row["dimension"]),
                        "judges": {} if verdict is None else {"judge": judge}})
        history += [Turn("user", prompt), Turn("agent", text_of(reply))]
    return out


def fairdialogue_replies(row: dict[str, Any], where: str) -> list[dict[str, Any]]:
    return [{"id": f"{row['task']}/{row['item']}/{row['attribute']}/{row['group']}",
             "turns": conversation(row["messages"], where), "text": row["answer"],
             "task": str(row["task"]), "turn": 1, "group": str(row["group"]), "judges": {}}]
