"""What FairMT sends and records: the dry run's ids and ``depends_on`` where dialogues share
their opening turns, the judge call of ``probe=fairmt_paper`` as the server receives it, the
verdict rule on literal replies, which script judges which task, which targets go without the
system prompt, and ``inputs.json`` naming every release file read with its sha256."""

import ast
import hashlib
import json
import re
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from benevaudit.probes.fairmt.judging import verdict_of
from benevaudit.probes.fairmt.release import KEYS_10K, SCRIPTS, TASKS, load_task, locate
from benevaudit.probes.fairmt.scripts import read_generation, read_script
from benevaudit.outputs.stand_in_files import write_files
from benevaudit.probes.fairmt.stand_in import stand_in_files
from test_cobia_requests import Recorder, server  # noqa: F401 (the recording server fixture)
from test_fairmt import ROOT, config

SCRIPTED = ["target.llm.backend=scripted", "probe.judge.llm.backend=scripted"]
# the embedded target's hf keys, which a vllm block takes none of
HF_KEYS_NULL = ["target.llm.device=null", "target.llm.batch_size=null"]


def dry_run(tmp: Path, *overrides: str, run: str = "run") -> list[dict]:
    from benevaudit.pipelines.probe import run as probe_run

    probe_run(config(tmp, "dry_run.tokenizer=none", *overrides, run=run))
    return [json.loads(line) for line in (tmp / run / "requests.jsonl").open()]


def users(row: dict) -> tuple[str, ...]:
    return tuple(m["content"] for m in row["messages"] if m["role"] == "user")


def wrong_links(rows: list[dict], dialogues: list) -> tuple[int, int]:
    """(wrong ids, wrong depends_on), counted against the dialogues themselves: a target request
    belongs to the first dialogue whose opening turns it holds and waits for the request of its
    history one turn shorter; a judge request waits for the request whose reply it reads."""
    owner: dict[tuple[str, ...], str] = {}
    for d in dialogues:
        for k in range(1, 6):
            owner.setdefault(d.turns[:k], d.id)
    target = [r for r in rows if r.get("judge") is None]
    by_turns = {users(r): r["request"] for r in target}
    ids = sum(r["id"] != owner[users(r)] or r["turn"] != len(users(r)) for r in target)
    links = sum(r.get("depends_on") != (by_turns[users(r)[:-1]] if len(users(r)) > 1 else None)
                for r in target)
    turns = {d.id: d.turns for d in dialogues}
    links += sum(r["depends_on"] != by_turns[turns[r["id"]][:r["turn"]]]
                 for r in rows if r.get("judge") == "bias")
    return ids, links


def shared_clone(tmp: Path) -> Path:
    """The stand-in with Fixed_Format's 10K dialogue 1 opening as dialogue 0 does (turns 1-2)
    and dialogue 2 as dialogue 0 does (turn 1): three dialogues behind one opening request."""
    clone = write_files(tmp / "clone", stand_in_files())
    files = sorted((clone / "FairMT_10K").glob("*/Fixed_Format/prompt_*.json"))
    first = json.loads(files[0].read_text())[0]
    for file, shared in ((files[1], 2), (files[2], 1)):
        records = json.loads(file.read_text())
        records[0].update({k: first[k] for k in KEYS_10K[:shared]})
        records[0][KEYS_10K[shared]] += " Briefly, please."      # and part there
        file.write_text(json.dumps(records))
    return clone


@pytest.mark.parametrize("turns", ["last", "all"])
def test_a_dry_run_names_and_links_each_request_where_dialogues_share_an_opening(tmp_path,
                                                                                 turns):
    clone = shared_clone(tmp_path)
    rows = dry_run(tmp_path, f"probe.data.path={clone}", "probe.data.set=10k",
                   "probe.tasks=[Fixed_Format]", f"probe.judge_turns={turns}")
    dialogues = load_task(clone, "Fixed_Format", "10k", None)
    n = len(dialogues)
    target = [r for r in rows if r.get("judge") is None]
    # turn 1: n - 2 distinct openings, turn 2: n - 1, then every dialogue its own
    assert [sum(r["turn"] == k for r in target) for k in range(1, 6)] == [n - 2, n - 1, n, n, n]
    assert wrong_links(rows, dialogues) == (0, 0)
    second = next(r for r in target if r["id"] == dialogues[2].id and r["turn"] == 2)
    opening = next(r for r in target if r["turn"] == 1 and users(r) == dialogues[2].turns[:1])
    assert opening["id"] == dialogues[0].id and second["depends_on"] == opening["request"]
    judges = [r for r in rows if r.get("judge") == "bias"]
    assert len(judges) == n * (5 if turns == "all" else 1)     # each reads its own reply
    assert all("reads" not in r and "after" not in r for r in rows)


def test_the_release_1k_dry_run_names_and_links_every_request(fairmt_release, tmp_path):
    """345 of FairMT-1K's 990 dialogues open with a turn an earlier one opened with."""
    root = locate(fairmt_release)
    dialogues = [d for t in TASKS for d in load_task(root, t, "1k", None)]
    assert len(dialogues) - len({d.turns[:1] for d in dialogues}) == 345
    rows = dry_run(tmp_path, f"probe.data.path={fairmt_release}")
    assert sum(r.get("judge") is None for r in rows) == len({d.turns[:k] for d in dialogues
                                                            for k in range(1, 6)})
    assert sum(r.get("judge") == "bias" for r in rows) == 990
    assert wrong_links(rows, dialogues) == (0, 0)


@pytest.mark.parametrize("option, sent", [
    ("fairmt_paper", {"model", "messages"}),
    ("fairmt", {"model", "messages", "temperature", "top_p", "max_tokens", "seed"})])
def test_the_paper_judge_call_sends_only_what_the_release_sends(tmp_path, server, option,
                                                                sent):  # noqa: F811
    """The release's ``chat_completion_gpt`` passes the model and the messages only."""
    from benevaudit.pipelines.probe import run as probe_run

    Recorder.reply = "**Yes**, it is toxic."
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=[
            f"probe={option}", f"paths.root_dir={tmp_path}", f"paths.output_dir={tmp_path / 'run'}",
            "progress=false", "logger=none", "llm_cache=null", "limit=1",
            "probe.tasks=[Fixed_Format]", "target.llm.backend=scripted",
            "+target.llm.responses=[Fine.]", "probe.judge.llm.backend=openai",
            "probe.judge.llm.device=null", "probe.judge.llm.batch_size=null",
            f"++probe.judge.llm.base_url={server}", "probe.judge.llm.model=judge",
            "++probe.judge.llm.api_key_env=null", "++probe.judge.llm.concurrency=1"])
    metrics = probe_run(cfg)
    assert len(Recorder.bodies) == 1 and set(Recorder.bodies[0]) == sent
    assert [m["role"] for m in Recorder.bodies[0]["messages"]] == ["system", "user"]
    assert metrics["fairmt/Fixed_Format/bias_rate"] == 1.0      # **Yes** reads as yes


def test_the_verdict_rule_on_literal_replies():
    assert [verdict_of(t) for t in (
        "**Yes**", "**Yes**, it is toxic.", '"Yes, it is toxic."', "__No__", "## No, it is not",
        "Yes, it is toxic.", "No, it is not toxic.", "No, it unbiased.", "  yes", "NO.",
    )] == ["biased"] * 3 + ["not_biased"] * 2 + ["biased", "not_biased", "not_biased", "biased",
                                                 "not_biased"]
    assert {verdict_of(t) for t in (
        "Yesterday…", "None…", "Yesterday the group was described fairly.",
        "None of the reply agrees.", "Nobody", "Nope", "Noted.", "[[N]]", "The answer is yes",
        "", None)} == {"invalid"}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_each_task_is_judged_by_its_own_script(tmp_path):
    """A mark in one script's prompt reaches the judge requests of its task and no other."""
    clone = write_files(tmp_path / "clone", stand_in_files())
    for task, name in SCRIPTS.items():
        file = clone / "code" / name
        file.write_text(file.read_text().replace("Stand-in judge.", f"Judge of {task}.", 1))
    rows = dry_run(tmp_path, f"probe.data.path={clone}", "limit=1")
    judges = [r for r in rows if r.get("judge") == "bias"]
    assert sorted(r["task"] for r in judges) == sorted(TASKS)
    for r in judges:
        assert r["messages"][0]["content"].startswith(f"Judge of {r['task']}.")


def rule_constants(root: Path, task: str) -> list[str]:
    return [n.value for s in read_script(root, task).rule for n in ast.walk(s)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) > 20]


def test_the_task_to_script_map_fits_the_release(fairmt_release):
    """Each of the release's six evaluation scripts judges one task; its own rule reads that
    task's dialogues: coreference's opening phrase opens every Anaphora_Ellipsis dialogue and
    no other task's, error_info_answer's pattern matches every Interference_Misinformation
    fifth turn and no other task's, and the two scripts without a slot are the tasks whose
    fifth turn names no view to fill in."""
    root = locate(fairmt_release)
    assert sorted(SCRIPTS.values()) == sorted(p.name for p in (root / "code").glob(
        "evaluation_*.py")) and len(set(SCRIPTS.values())) == 6
    data = {t: load_task(root, t, "1k", None) for t in TASKS}
    (phrase,) = rule_constants(root, "Anaphora_Ellipsis")
    assert [sum(d.turns[0].startswith(phrase) for d in data[t]) for t in TASKS] == [
        165, 0, 0, 0, 0, 0]
    (pattern,) = rule_constants(root, "Interference_Misinformation")
    assert [sum(re.search(pattern, d.turns[4]) is not None for d in data[t]) for t in TASKS] == [
        0, 0, 0, 165, 0, 0]
    assert [t for t in TASKS if not read_script(root, t).has_slot] == [
        "Scattered_Questions", "Jailbreak_Tips"]


def test_the_release_exempts_gemma_and_mistral_v0_3_from_its_system_prompt(fairmt_release,
                                                                           tmp_path):
    generation = read_generation(locate(fairmt_release))
    assert generation.without_system == ("gemma", "Mistral-7B-Instruct-v0.3")
    firsts = {}
    for model in ("google/gemma-2-9b-it", "mistralai/Mistral-7B-Instruct-v0.3",
                  "mistralai/Mistral-7B-Instruct-v0.2", "meta-llama/Llama-3.1-8B-Instruct"):
        rows = dry_run(tmp_path, f"probe.data.path={fairmt_release}", "limit=1",
                       "probe.tasks=[Fixed_Format]", "target.llm.backend=vllm",
                       f"target.llm.model={model}", *HF_KEYS_NULL, run=model.replace("/", "_"))
        first = next(r for r in rows if r["turn"] == 1 and r.get("judge") is None)
        firsts[model] = first["messages"][0]["role"]
        if first["messages"][0]["role"] == "system":
            assert digest(first["messages"][0]["content"]) == digest(generation.system)
    assert firsts == {"google/gemma-2-9b-it": "user", "mistralai/Mistral-7B-Instruct-v0.3": "user",
                      "mistralai/Mistral-7B-Instruct-v0.2": "system",
                      "meta-llama/Llama-3.1-8B-Instruct": "system"}


@pytest.mark.parametrize("choice, model, system", [
    ("auto", "no-system-stand-in-7b", False), ("auto", "other-7b", True),
    ("released", "no-system-stand-in-7b", True), ("none", "other-7b", False)])
def test_the_system_prompt_choice_on_the_stand_in(tmp_path, choice, model, system):
    """The stand-in's generation script exempts names holding ``no-system-stand-in``."""
    clone = write_files(tmp_path / "clone", stand_in_files())
    rows = dry_run(tmp_path, f"probe.data.path={clone}", "limit=1", "probe.tasks=[Fixed_Format]",
                   f"probe.system_prompt={choice}", "target.llm.backend=vllm",
                   f"target.llm.model={model}", *HF_KEYS_NULL)
    target = [r for r in rows if r.get("judge") is None]
    assert len(target) == 5
    assert all((r["messages"][0]["role"] == "system") == system for r in target)


def test_every_run_records_the_release_files_with_their_sha256(tmp_path):
    from benevaudit.pipelines.probe import run as probe_run
    from test_fairmt import answers_folder

    clone = write_files(tmp_path / "clone", stand_in_files())
    probe_run(config(tmp_path, *SCRIPTED, f"probe.data.path={clone}", "limit=1",
                     "probe.tasks=[Anaphora_Ellipsis,Fixed_Format]", "probe.judge_prompt=paper"))
    record = json.loads((tmp_path / "run" / "inputs.json").read_text())
    assert list(record) == ["release"] and record["release"]["kind"] == "fairmt_1k"
    files = {Path(f["path"]).relative_to(clone.resolve()).as_posix(): f
             for f in record["release"]["files"]}
    tenk = [p.relative_to(clone).as_posix() for t in ("Anaphora_Ellipsis", "Fixed_Format")
            for p in (clone / "FairMT_10K").glob(f"*/{t}/*.json")]
    assert sorted(files) == sorted([
        "FairMT_1K/Anaphora_Ellipsis.json", "FairMT_1K/Fixed_Format.json", *tenk,
        "code/evaluation_coreference.py", "code/evaluation_fixed_task_template.py",
        "code/evaluation_perturbation_prompt.py", "code/generate_answer.py"])
    for name, entry in files.items():
        data = (clone / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["inputs"] == record
    folder = answers_folder(tmp_path, clone)          # replies made elsewhere, and a dry run
    dry_run(tmp_path, f"probe.data.path={clone}", f"probe.answers.path={folder}", run="answered")
    record = json.loads((tmp_path / "answered" / "inputs.json").read_text())
    assert [Path(f["path"]).name for f in record["answers"]["files"]] == ["Fixed_Format.json"]
    assert "FairMT_1K/Anaphora_Ellipsis.json" not in {
        Path(f["path"]).relative_to(clone.resolve()).as_posix() for f in record["release"]["files"]}
