"""The comments of a conf/ YAML file, read as documentation: its header (the comment block it
opens with, which says what the option is for) and, for each key, the comment after it on its
line or, failing that, the comment lines just above it.

A line-based reader, not a YAML parser: it needs the comments, which YAML parsers drop, and the
files under conf/ are plain block mappings (a key per line, lists of scalars, flow values).
Keys inside a list (``defaults:``, a list of mappings) are values, not options, and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w+.-]*|\"[^\"]*\"|'[^']*'):(?:\s|$)")


@dataclass
class YamlComments:
    """What one file says about itself and its keys: every key it sets (a dotted path relative
    to its package) with its comment, "" where it has none."""

    header: str = ""
    keys: dict[str, str] = field(default_factory=dict)
    package: str | None = None        # a ``# @package`` line, where there is one


def split_comment(line: str) -> tuple[str, str]:
    """(the line without its comment, the comment's text): a ``#`` starts a comment at the
    start of the line or after a space, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and (i == 0 or line[i - 1] in " :[{,"):
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def read_comments(path: Path) -> YamlComments:
    """The header and the per-key comments of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = YamlComments()
    header: list[str] = []
    start = 0
    for start, line in enumerate(lines):          # the opening comment block is the header
        text = line.strip()
        if not text.startswith("#"):
            break
        if text.startswith("# @package"):
            found.package = text.split(maxsplit=2)[2].strip()
        else:
            header.append(text.lstrip("#").strip())
    else:
        start = len(lines)
    found.header = " ".join(h for h in header if h)
    stack: list[tuple[int, str]] = []             # (indent, key) of the enclosing keys
    above: list[str] = []                         # comment lines just above the current line
    skip_below: int | None = None                 # inside a list: deeper lines are values
    for line in lines[start:]:
        code, comment = split_comment(line)
        if not code.strip():                      # a comment line gathers; a blank one resets
            above = [*above, comment] if comment else []
            continue
        indent = len(code) - len(code.lstrip(" "))
        if skip_below is not None and indent > skip_below:
            above = []
            continue
        skip_below = None
        if code.lstrip().startswith("- "):
            skip_below = stack[-1][0] if stack else -1
            above = []
            continue
        match = KEY.match(code)
        if not match:
            above = []
            continue
        key = match["key"].strip("\"'")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path_key = ".".join([k for _, k in stack] + [key])
        stack.append((indent, key))
        text = comment or " ".join(c for c in above if c)
        if key == "defaults" and indent == 0:
            skip_below = 0
        else:
            found.keys[path_key] = text
        above = []
    return found

