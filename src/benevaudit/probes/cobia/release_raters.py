"""The release's raters, read from its ``judges/*.ipynb`` at run time (no copy is carried here).

Their prompts are Python string literals in notebook cells; they are evaluated with
:func:`ast.literal_eval`, so the escapes mean what Python made of them (the bias rater's
``\\n`` is a newline, the NLI rater's ``\\\\n`` a backslash and an n). The user message is the
cell's f-string (``input_txt = f"..."``) with its two names, the opinion and the statement.
The refusal rater is no model: its normalisation rules and its list of refusal openings are
read the same way. Adjacent string literals in that list are joined by Python (three missing
commas in the release); ``corrected`` keeps each literal as its own opening.

DAN replies are rated by ``judges/dan-customized/``: the same raters on the text after the
jailbreak tag, the NLI one with the bias rater's user message ("Biased Opinion: ...").
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_json

NOTEBOOKS = {"bias": "bias-judge.ipynb", "nli": "NLI-judge.ipynb",
             "refusal": "refusal-judge.ipynb", "guard": "granite-judge.ipynb"}
DAN_NOTEBOOKS = {"bias": "dan-customized/bias-judge-dan.ipynb",
                 "nli": "dan-customized/NLI-judge-dan.ipynb",
                 "guard": "dan-customized/granite-judge-dan.ipynb"}
# the names the release's f-strings use -> the names filled here
FIELDS = {"opnion_text": "opinion", "statement_text": "output"}


@dataclass(frozen=True)
class RaterText:
    """A released LLM rater: its system template and its user-message format."""

    system: str
    user: str          # a str.format pattern over {opinion} and {output}


@dataclass(frozen=True)
class KeywordRule:
    """The released refusal rule: normalise, then look for a refusal opening."""

    rules: tuple[tuple[re.Pattern[str], str], ...]
    openings: tuple[str, ...]


def notebook(folder: Path, name: str) -> list[tuple[str, ast.Module]]:
    """The code cells of ``judges/<name>`` as (source, parsed module)."""
    path = folder / name
    if not path.is_file():
        raise InputError(f"{folder}: no {name} (a released CoBia rater)")
    return _cells(str(path))


@lru_cache(maxsize=16)
def _cells(path: str) -> list[tuple[str, ast.Module]]:
    notebook = read_json(path, expected="a released CoBia rater notebook")
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise InputError(f"{path}: not a Jupyter notebook (expected an object with a list of "
                         "'cells')")
    out = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        lines = cell.get("source", [])
        lines = [lines] if isinstance(lines, str) else lines
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise InputError(f"{path}: code cell {index}: 'source' is not text (expected a "
                             "string or a list of strings)")
        source = "".join(lines)
        try:
            out.append((source, ast.parse(source)))
        except SyntaxError as err:
            raise InputError(f"{path}: code cell {index} is not Python ({err.msg})") from None
        except (ValueError, RecursionError, MemoryError) as err:   # a NUL, or nested too deep
            raise InputError(f"{path}: code cell {index} is not Python the parser can read "
                             f"({type(err).__name__})") from None
    return out


def assigned(folder: Path, name: str, variable: str) -> tuple[str, ast.expr]:
    """The last value assigned to ``variable`` anywhere in the notebook, with its cell source."""
    found = None
    for source, module in notebook(folder, name):
        for node in ast.walk(module):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == variable for t in node.targets):
                found = (source, node.value)
    if found is None:
        raise InputError(f"{folder / name}: no assignment to {variable!r}")
    return found


def string_value(folder: Path, name: str, variable: str) -> str:
    value = ast.literal_eval(assigned(folder, name, variable)[1])
    if not isinstance(value, str):
        raise InputError(f"{folder / name}: {variable!r} is not a string literal")
    return value


def user_format(folder: Path, name: str) -> str:
    """``input_txt``'s f-string as a ``str.format`` pattern over {opinion} and {output}."""
    node = assigned(folder, name, "input_txt")[1]
    if not isinstance(node, ast.JoinedStr):
        raise InputError(f"{folder / name}: 'input_txt' is not an f-string")
    parts = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            parts.append(part.value.replace("{", "{{").replace("}", "}}"))
        elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
              and part.value.id in FIELDS and part.conversion == -1 and part.format_spec is None):
            parts.append("{" + FIELDS[part.value.id] + "}")
        else:
            raise InputError(f"{folder / name}: 'input_txt' fills something other than "
                             f"{sorted(FIELDS)}")
    return "".join(parts)


def rater_text(folder: Path, kind: str, dan: bool = False) -> RaterText:
    """The released system template and user format of the ``bias`` or ``nli`` rater."""
    if kind not in ("bias", "nli"):
        raise ConfigError(f"the release's LLM raters are bias and nli, not {kind!r}")
    name = (DAN_NOTEBOOKS if dan else NOTEBOOKS)[kind]
    return RaterText(string_value(folder, name, "template"), user_format(folder, name))


def opinion(group: str, descriptor: str) -> str:
    """The biased opinion the released raters are shown (its split on one space, as released)."""
    if len(descriptor.split(" ")) < 3:
        return f"{group} are {descriptor}."
    return f"{group} have the characteristics of {descriptor}."


def keyword_rule(folder: Path, corrected: bool = False) -> KeywordRule:
    """The released refusal rule; ``corrected`` splits the literals Python joined."""
    name = NOTEBOOKS["refusal"]
    rules_node = assigned(folder, name, "AMBIGUITY_RULES")[1]
    if not isinstance(rules_node, ast.Dict):
        raise InputError(f"{folder / name}: 'AMBIGUITY_RULES' is not a dict literal")
    rules = []
    for key, value in zip(rules_node.keys, rules_node.values, strict=True):
        if not (isinstance(key, ast.Call) and len(key.args) == 1 and not key.keywords
                and ast.unparse(key.func) == "re.compile"):
            raise InputError(f"{folder / name}: an AMBIGUITY_RULES key is not re.compile(<str>)")
        rules.append((re.compile(ast.literal_eval(key.args[0])), ast.literal_eval(value)))
    source, node = assigned(folder, name, "refusal_signals")
    if corrected:
        segment = ast.get_source_segment(source, node) or ""
        openings = [ast.literal_eval(tok.string) for tok in
                    tokenize.generate_tokens(io.StringIO(segment).readline)
                    if tok.type == tokenize.STRING]
    else:
        openings = ast.literal_eval(node)
    if not (isinstance(openings, list) and all(isinstance(s, str) for s in openings)):
        raise InputError(f"{folder / name}: 'refusal_signals' is not a list of strings")
    return KeywordRule(tuple(rules), tuple(openings))


def normalise(rule: KeywordRule, text: str) -> str:
    text = text.strip().lower()
    for pattern, replacement in rule.rules:
        text = pattern.sub(replacement, text)
    return text


def refusal_opening(rule: KeywordRule, text: str) -> str | None:
    """The first listed opening the normalised reply starts with, or None (compliance)."""
    norm = normalise(rule, text)
    return next((phrase for phrase in rule.openings if norm.startswith(phrase)), None)
