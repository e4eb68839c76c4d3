"""Where the CoBia files sit: a clone of the release repository or a flat folder of its three
data files; and the release's prompt templates, read as they ship.

A clone (github.com/nafisenik/CoBia) holds ``dataset/cobia_dataset.json``,
``dataset/cobia_extension/{group_chars,negative_description}.json``, ``prompt-templates/`` and
``judges/`` (the release's raters, as notebooks); a flat folder holds only the three JSON
files. The templates and the raters' notebooks are read at run time from the folder given: benevaudit carries no copy of their text.
A symlink among them that points out of the folder is refused before anything is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benevaudit.contained import check_inside
from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_json

FILES = ("cobia_dataset.json", "group_chars.json", "negative_description.json")
CLONE_DIRS = {"cobia_dataset.json": "dataset", "group_chars.json": "dataset/cobia_extension",
              "negative_description.json": "dataset/cobia_extension"}
TEMPLATES = {"hcc": "HCC-template.json", "scc": "SCC-template.json",
             "zero_shot": "zeroshot-template.json", "roleplay": "roleplay-template.json",
             "dan": "dan-template.json"}
Message = dict[str, str]


@dataclass(frozen=True)
class Release:
    """The CoBia files found under one folder."""

    root: Path
    files: dict[str, Path]          # each of FILES -> its path
    clone: bool                     # the repository's layout (else the flat folder)
    templates: Path | None          # prompt-templates/, when there
    raters: Path | None             # judges/ (the released raters' notebooks), when there


def locate(path: str | Path) -> Release:
    """The clone layout if its three files are there, else the flat one; neither is an error."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ConfigError(f"probe.data.path: {str(path)!r} is not a directory; point it at a "
                          f"clone of github.com/nafisenik/CoBia or a folder holding {list(FILES)}")
    clone = {name: root / sub / name for name, sub in CLONE_DIRS.items()}
    flat = {name: root / name for name in FILES}
    for files, is_clone in ((clone, True), (flat, False)):
        if all(p.is_file() for p in files.values()):
            check_inside(root, [*(str(p.relative_to(root)) for p in files.values()),
                                "prompt-templates", "judges"], "a CoBia release folder")
            templates, raters = root / "prompt-templates", root / "judges"
            return Release(root, files, is_clone, templates if templates.is_dir() else None,
                           raters if raters.is_dir() else None)
    raise ConfigError(f"probe.data.path: {root} is neither a clone of the CoBia repository "
                      f"(dataset/cobia_dataset.json, dataset/cobia_extension/group_chars.json "
                      f"and negative_description.json) nor a folder holding {list(FILES)}")


def read_template(release: Release, method: str) -> list[Message]:
    """The released template of ``method``: a list of ``{role, content}`` messages."""
    if release.templates is None:
        raise ConfigError(f"probe.layout=official needs the release's prompt-templates/ under "
                          f"{release.root}; use probe.layout=seeded for a flat folder")
    if method not in TEMPLATES:
        raise ConfigError(f"unknown CoBia method {method!r}; valid methods: {list(TEMPLATES)}")
    path = release.templates / TEMPLATES[method]
    if not path.is_file():
        raise InputError(f"{release.templates}: no {TEMPLATES[method]} (the {method} template)")
    messages = read_json(path, expected=f"the release's {method} template, a list of messages")
    ok = isinstance(messages, list) and messages and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in messages)
    if not ok:
        raise InputError(f"{path}: expected a list of {{role, content}} messages")
    return [{"role": m["role"], "content": m["content"]} for m in messages]
