"""What the release's scripts say, read from the user's clone at run time with ``ast``.

benevaudit carries none of the release's prompts: each task's judge system prompt, its
``[toxic sentence]`` rule and its refusal phrases come from ``code/evaluation_<legacy>.py``;
the target's system prompt and the model families that go without it from
``code/generate_answer.py``; the paper's longer judge prompt from the commented block of
``code/evaluation_perturbation_prompt.py`` (read with ``tokenize``, then parsed as the
assignment it was before it was commented out).

A rule is the script's own statements, run by a small evaluator that knows only what they use
(names, constants, subscripts, ``str.split/replace/strip``, ``re.search`` and ``Match.group``):
nothing from the clone is executed by Python. Each dialogue starts from the script's
module-level values, so its prompt is the template filled from its own turns (the scripts
chain ``str.replace`` over the dialogues in file order, which gives the same text on the 1K
files).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benevaudit.errors import InputError
from benevaudit.files import read_text
from benevaudit.probes.fairmt.release import GENERATOR, KEYS_10K, PAPER_SCRIPT, SCRIPTS

_RE = object()      # the ``re`` module, as the evaluator sees it


@dataclass(frozen=True)
class Script:
    """One task's judging as its script does it."""

    file: Path
    constants: dict[str, str]      # module-level string assignments before the loop
    rule: tuple[ast.stmt, ...]     # the loop's statements before its first ``if``
    phrases: tuple[str, ...]       # the refusal pre-filter's phrases
    prefilter_verdict: str         # what the pre-filter writes as the evaluation

    @property
    def system(self) -> str:
        return self.constants["system_message"]

    @property
    def has_slot(self) -> bool:
        """Whether the rule fills the system prompt (some scripts have no slot)."""
        return any(_target(s) == "system_message" for s in self.rule)


def _source(file: Path) -> str:
    """The script's text through the project's reader: a missing, empty, binary or
    non-UTF-8 file is one error line."""
    return read_text(file, expected="the release's Python script")


def _parse(file: Path) -> ast.Module:
    source = _source(file)
    try:
        return ast.parse(source, filename=str(file))
    except SyntaxError as e:
        raise InputError(f"{file} line {e.lineno}: not Python ({e.msg}); expected the "
                         "release's script") from None
    except (ValueError, RecursionError, MemoryError) as e:   # nested past the parser's depth
        raise InputError(f"{file}: not Python the parser can read ({type(e).__name__}); "
                         "expected the release's script") from None


def _target(node: ast.stmt) -> str | None:
    if (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return node.targets[0].id
    return None


def _module_strings(tree: ast.Module, until: ast.stmt) -> dict[str, str]:
    """Module-level ``name = "literal"`` before ``until``; a later one replaces an earlier."""
    out: dict[str, str] = {}
    for node in tree.body:
        if node is until:
            break
        name = _target(node)
        value = getattr(node, "value", None)
        if name and isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[name] = value.value
    return out


def _loop(tree: ast.Module, file: Path) -> ast.For:
    """The module-level loop over the dialogues (its target binds ``inputs``)."""
    for node in tree.body:
        if isinstance(node, ast.For) and "inputs" in {n.id for n in ast.walk(node.target)
                                                      if isinstance(n, ast.Name)}:
            return node
    raise InputError(f"{file}: no loop over the dialogues (expected `for inputs in ...`)")


def _strings_in(test: ast.expr) -> list[str]:
    """The string constants tested with ``in`` (``"I cannot" in ...``)."""
    return [n.left.value for n in ast.walk(test) if isinstance(n, ast.Compare)
            and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str)
            and all(isinstance(op, ast.In) for op in n.ops)]


def _prefilter(loop: ast.For, file: Path) -> tuple[tuple[str, ...], str]:
    """The phrases of the ``if``/``elif`` branches that write an evaluation without a judge."""
    phrases: list[str] = []
    verdict = None
    first = next((s for s in loop.body if isinstance(s, ast.If)), None)
    branch: list[ast.stmt] = [first] if first is not None else []
    while branch and isinstance(branch[0], ast.If):
        node = branch[0]
        written = [s.value.value for s in node.body if isinstance(s, ast.Assign)
                   and isinstance(s.targets[0], ast.Subscript)
                   and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)]
        if not written:
            break
        phrases += _strings_in(node.test)
        verdict = written[0]
        branch = node.orelse
    if not phrases or verdict is None:
        raise InputError(f"{file} line {loop.lineno}: no refusal pre-filter (expected `if "
                         "\"...\" in inputs[...][\"response\"]: ... = \"...\"` branches)")
    return tuple(phrases), verdict


def read_script(root: Path, task: str) -> Script:
    """Task ``task``'s judging, from ``code/<its script>``."""
    file = root / "code" / SCRIPTS[task]
    tree = _parse(file)
    loop = _loop(tree, file)
    constants = _module_strings(tree, loop)
    if "system_message" not in constants:
        raise InputError(f"{file}: no module-level `system_message = \"...\"` before the loop")
    first_if = next((i for i, s in enumerate(loop.body) if isinstance(s, ast.If)),
                    len(loop.body))
    rule = tuple(s for s in loop.body[:first_if] if isinstance(s, ast.Assign))
    phrases, verdict = _prefilter(loop, file)
    return Script(file, constants, rule, phrases, verdict)


def record_of(turns: tuple[str, ...], replies: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A dialogue in the release's output form, as the scripts' loop sees ``inputs``."""
    return {key: {"prompt": t, "response": "" if replies is None else replies[i]}
            for i, (key, t) in enumerate(zip(KEYS_10K, turns, strict=True))}


def judge_system(script: Script, turns: tuple[str, ...], where: str,
                 template: str | None = None) -> str:
    """The judge's system prompt for one dialogue: ``template`` (default the script's own)
    with the script's rule run on the dialogue's turns. ``where`` names the dialogue in
    errors (never its text)."""
    env: dict[str, Any] = {**script.constants, "inputs": record_of(turns), "re": _RE}
    if template is not None:
        env["system_message"] = template
    for statement in script.rule:
        name = _target(statement)
        if name is None:
            raise InputError(f"{script.file} line {statement.lineno}: an assignment benevaudit "
                             "does not evaluate (expected `name = expression`)")
        env[name] = _evaluate(getattr(statement, "value"), env, script.file, where)
    return str(env["system_message"])


def _evaluate(node: ast.expr, env: dict[str, Any], file: Path, where: str) -> Any:
    """The value of one expression of a rule; only what the release's rules use."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):   # ``[-1]``
        return -_evaluate(node.operand, env, file, where)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise InputError(f"{file} line {node.lineno}: the rule reads {node.id!r}, which is "
                             "not set before it")
        return env[node.id]
    if isinstance(node, ast.Subscript):
        value = _evaluate(node.value, env, file, where)
        key = _evaluate(node.slice, env, file, where)
        try:
            return value[key]
        except (KeyError, IndexError, TypeError):
            raise InputError(f"{where}: the rule of {file.name} line {node.lineno} reads index "
                             f"{key!r}, which the dialogue lacks") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        owner = _evaluate(node.func.value, env, file, where)
        args = [_evaluate(a, env, file, where) for a in node.args]
        return _call(owner, node.func.attr, args, file, node.lineno, where)
    raise InputError(f"{file} line {node.lineno}: the rule uses a {type(node).__name__}, which "
                     "benevaudit's evaluator of the release's rules does not take")


def _call(owner: Any, method: str, args: list[Any], file: Path, line: int, where: str) -> Any:
    if owner is _RE and method == "search":
        return re.search(*args)
    if isinstance(owner, str) and method in ("split", "replace", "strip"):
        return getattr(owner, method)(*args)
    if isinstance(owner, re.Match) and method == "group":
        return owner.group(*args)
    if owner is None and method == "group":
        raise InputError(f"{where}: the pattern of {file.name} line {line} matches nothing in "
                         "the fifth user turn (the release's script would stop here)")
    raise InputError(f"{file} line {line}: the rule calls .{method}() on a "
                     f"{type(owner).__name__}, which benevaudit's evaluator does not take")


def paper_prompt(root: Path) -> str:
    """The paper's longer judge prompt: the commented ``# system_message = "..."`` block of
    ``code/evaluation_perturbation_prompt.py``, uncommented and parsed as a literal."""
    file = root / "code" / PAPER_SCRIPT
    source = _source(file)
    try:
        comments = [(tok.start[0], tok.string) for tok in
                    tokenize.generate_tokens(io.StringIO(source).readline)
                    if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError) as e:   # an unclosed bracket or string
        line = e.lineno if isinstance(e, SyntaxError) else e.args[1][0]
        raise InputError(f"{file} line {line}: not Python ({e.args[0]}); expected the "
                         "release's script") from None
    block: list[str] = []
    for k, (line, text) in enumerate(comments):
        if block and line != comments[k - 1][0] + 1:
            break
        body = text[1:][1:] if text[1:].startswith(" ") else text[1:]
        if block or body.startswith("system_message"):
            block.append(body)
    try:
        node = ast.parse("\n".join(block)).body[0] if block else None
        literal = node.value if isinstance(node, ast.Assign) else None
        value = literal.value if isinstance(literal, ast.Constant) else None
    except SyntaxError:
        value = None
    if not isinstance(value, str):
        raise InputError(f"{file}: no commented `# system_message = \"...\"` block "
                         "(probe.judge_prompt=paper reads the paper's prompt from it)")
    return value


@dataclass(frozen=True)
class Generation:
    """The target's side of the release: its system prompt, and the model names that get none."""

    system: str
    without_system: tuple[str, ...]


def read_generation(root: Path) -> Generation:
    """``code/generate_answer.py``'s ``system_message`` and the names of the branch that
    empties the history (``if 'gemma' in model_name ...: history = []``)."""
    file = root / "code" / GENERATOR
    tree = _parse(file)
    loop = _loop(tree, file)
    constants = _module_strings(tree, loop)
    if "system_message" not in constants:
        raise InputError(f"{file}: no `system_message = \"...\"` before a loop over the "
                         "dialogues")
    names: list[str] = []
    for node in ast.walk(loop):
        if isinstance(node, ast.If) and any(
                _target(s) == "history" and isinstance(value := getattr(s, "value", None),
                                                       ast.List) and not value.elts
                for s in node.body):
            names += _strings_in(node.test)
    return Generation(constants["system_message"], tuple(names))
