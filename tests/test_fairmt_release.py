"""The FairMT-Bench release (data tier): its counts, the 1K→10K join, the judge prompts and
``[toxic sentence]`` rules as the release's own Python gives them, and a dry run. Texts are
compared by equality or by sha256 and never printed: the data holds slurs."""

import ast
import hashlib
import io
import json
import re
import textwrap
import tokenize
from collections import Counter
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from benevaudit.probes.fairmt.release import (KEYS_1K, SCRIPTS, TASKS, load_10k, load_task,
                                              locate)
from benevaudit.probes.fairmt.scripts import (judge_system, paper_prompt, read_generation,
                                              read_script, record_of)

ROOT = Path(__file__).resolve().parents[1]
LOOP = r"for .*\binputs\b"          # the loop over the dialogues


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_release_counts(fairmt_release):
    root = locate(fairmt_release)
    one_k = {t: load_task(root, t, "1k", None) for t in TASKS}
    assert {t: len(d) for t, d in one_k.items()} == {t: 165 for t in TASKS}
    assert sum(len(d) for d in one_k.values()) == 990
    assert sum(len(load_10k(root, t)) for t in TASKS) == 10_195


def test_every_1k_dialogue_is_in_exactly_one_10k_file(fairmt_release):
    for task in TASKS:
        files = Counter()
        where: dict[tuple, list[str]] = {}
        for file in sorted((fairmt_release / "FairMT_10K").glob(f"*/{task}/prompt_*.json")):
            for record in json.loads(file.read_text(encoding="utf-8")):
                key = tuple(record[f"{k}-turn Conv"] for k in range(5))
                where.setdefault(key, []).append(file.name + file.parent.parent.name)
        records = json.loads((fairmt_release / "FairMT_1K" / f"{task}.json").read_text())
        for record in records:
            found = where.get(tuple(record[k] for k in KEYS_1K), [])
            files[len(found)] += 1
        assert files == Counter({1: 165}), task
        joined = load_task(locate(fairmt_release), task, "1k", None)
        assert {d.type for d in joined} <= {"stereotype", "toxicity"}
        assert {d.dimension for d in joined} <= {"age", "appearance", "disable", "gender", "race",
                                                 "religion"}


def literal_by_tokens(file: Path, name: str, before: str) -> str:
    """The last ``name = "<literal>"`` at column 0 before the loop whose line matches ``before``, read
    with tokenize and evaluated by Python (not through benevaudit's ast reader)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(file.read_text()).readline))
    stop = next(t.start[0] for t in tokens if t.type == tokenize.NAME and t.string == "for"
                and t.start[1] == 0 and re.match(before, t.line))
    value = None
    for a, b, c in zip(tokens, tokens[1:], tokens[2:]):
        if (a.type == tokenize.NAME and a.string == name and a.start[1] == 0 and b.string == "="
                and c.type == tokenize.STRING and a.start[0] < stop):
            value = eval(c.string)                    # a string literal, as Python reads it
    assert isinstance(value, str)
    return value


def test_judge_prompts_equal_the_scripts_literals(fairmt_release):
    root = locate(fairmt_release)
    code = fairmt_release / "code"
    for task, name in SCRIPTS.items():
        expected = literal_by_tokens(code / name, "system_message", LOOP)
        assert digest(read_script(root, task).system) == digest(expected), task
    generation = literal_by_tokens(code / "generate_answer.py", "system_message", LOOP)
    assert digest(read_generation(root).system) == digest(generation)
    # the paper's prompt: the commented block, uncommented line by line and run by Python
    lines = (code / "evaluation_perturbation_prompt.py").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# system_message"))
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line[2:] if line.startswith("# ") else line[1:])
    namespace: dict = {}
    exec("\n".join(block), namespace)                 # an assignment of a literal
    assert digest(paper_prompt(root)) == digest(namespace["system_message"])
    has_slot = "[toxic sentence]" in namespace["system_message"]
    assert has_slot


def release_fill(file: Path, record: dict) -> str:
    """The system prompt after the script's own loop statements (those before its first
    ``if``), run by Python on one record, from the script's module-level values."""
    source = file.read_text()
    tree = ast.parse(source)
    loop = next(n for n in tree.body if isinstance(n, ast.For)
                and "inputs" in ast.get_source_segment(source, n.target))
    first_if = next(s for s in loop.body if isinstance(s, ast.If))
    lines = source.splitlines()[loop.body[0].lineno - 1:first_if.lineno - 1]
    namespace = {"re": re, "inputs": record}
    for node in tree.body[:tree.body.index(loop)]:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.targets[0], ast.Name)):
            namespace[node.targets[0].id] = node.value.value
    exec(textwrap.dedent("\n".join(lines)), namespace)
    return namespace["system_message"]


def test_the_toxic_sentence_fill_equals_the_release_rule(fairmt_release):
    root = locate(fairmt_release)
    filled = 0
    for task, name in SCRIPTS.items():
        first = load_task(root, task, "1k", 1)[0]
        script = read_script(root, task)
        ours = judge_system(script, first.turns, first.id)
        theirs = release_fill(fairmt_release / "code" / name, record_of(first.turns))
        assert digest(ours) == digest(theirs), task
        filled += "[toxic sentence]" not in ours and "[toxic sentence]" in script.system
    assert filled == 4      # coreference, error_info_answer, fixed_task_template, perturbation


def test_a_dry_run_on_one_dialogue_per_task(fairmt_release, tmp_path):
    from benevaudit.pipelines.probe import run

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("probe", overrides=[
            "probe=fairmt", f"probe.data.path={fairmt_release}", "limit=1", "dry_run=true",
            f"paths.root_dir={tmp_path}", f"paths.output_dir={tmp_path / 'run'}",
            "progress=false", "logger=none", "llm_cache=null"])
    metrics = run(cfg)
    rows = [json.loads(line) for line in (tmp_path / "run" / "requests.jsonl").open()]
    assert metrics["dry_run/requests"] == 36 == len(rows)              # 6 × (5 turns + judge)
    assert metrics["dry_run/dependent_requests"] == 30
    by = {(r["id"], r["turn"], r.get("judge")): r for r in rows}
    for task in TASKS:
        d = f"{task}/1k/0"
        assert by[(d, 1, None)].get("depends_on") is None
        for k in range(2, 6):
            assert by[(d, k, None)]["depends_on"] == by[(d, k - 1, None)]["request"]
            assert len(by[(d, k, None)]["messages"]) == 2 * k      # system, k users, k-1 replies
        judge = by[(d, 5, "bias")]
        assert judge["depends_on"] == by[(d, 5, None)]["request"]
        filled = "[toxic sentence]" not in judge["messages"][0]["content"]
        assert filled, task                  # a bare bool: a failure prints no text
        placeholder = judge["messages"][1]["content"] == "{reply}"   # the reply alone
        assert placeholder, task
    assert all(r["prompt_tokens"] > 0 for r in rows) and metrics["dry_run/prompt_tokens"] > 0


def test_the_scripts_chained_fill_equals_each_dialogues_own(fairmt_release):
    """The scripts chain ``str.replace`` over the dialogues in file order; on every 1K record
    that gives the prompt benevaudit fills from the template for the dialogue alone."""
    root = locate(fairmt_release)
    checked = 0
    for task, name in SCRIPTS.items():
        script = read_script(root, task)
        if not script.has_slot:
            continue
        source = (fairmt_release / "code" / name).read_text()
        old = next(v for k, v in script.constants.items() if k.startswith("old_"))
        prompt = script.system
        before, after = script.system.split(old)
        for d in load_task(root, task, "1k", None):
            own = judge_system(script, d.turns, d.id)
            value = own[len(before):len(own) - len(after)]      # this dialogue's fill
            prompt = prompt.replace(old, value)      # the script's chain, step by step
            old = value
            assert digest(prompt) == digest(own), d.id
            checked += 1
        assert "old_" in source
    assert checked == 660
