"""Paths named inside a user's file, or found in a release, stay inside their folder.

A recordings manifest names its clips by path, and a release clone holds its data, templates
and scripts at fixed places. Whatever is read from them may be sent to a model, which may be a
remote API, so each path is resolved (symlinks followed) and must lie under its folder: an
absolute path, a ``../`` that climbs out, or a symlink that points elsewhere is refused with one
error line naming the file and row, before anything is read. Where files outside are wanted,
an option says so explicitly (``probe.audio.allow_outside``). Messages name the row and the
field, never the value: a manifest's paths are the user's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from benevaudit.errors import InputError


def contained(folder: Path, named: str, where: str, option: str | None = None) -> Path:
    """The file ``named`` in a file under ``folder`` (relative to it), resolved; an
    :class:`InputError` naming ``where`` (file, row, field) when it leads outside ``folder``.
    ``option``: the switch that would allow it, named in the error (None: the file outside is
    allowed, and returned as written)."""
    if not named.strip():
        raise InputError(f"{where}: empty; expected a path relative to {folder}")
    given = Path(named)
    if option is None:
        return folder / given.expanduser()
    root, target = folder.resolve(), (folder / given).resolve()
    if target.is_relative_to(root) and not given.is_absolute():
        return target
    if given.is_absolute():
        reason = "an absolute path"
    elif not Path(os.path.normpath(root / given)).is_relative_to(root):
        reason = "a '../' path that climbs out of it"
    else:
        reason = "a symlink that points out of it"
    raise InputError(f"{where}: {reason}; expected a file inside {folder} (set {option}=true "
                     "to read files outside it)")


def check_inside(root: Path, parts: Iterable[str], what: str) -> None:
    """Every file and folder under ``root/<part>`` (the part included, symlinked folders
    walked) resolves inside ``root``: a release whose symlinks lead out of its clone is refused
    before it is read."""
    base, seen = root.resolve(), set()
    todo = [root / part for part in parts]
    while todo:
        path = todo.pop()
        if not path.exists() and not path.is_symlink():
            continue
        real = path.resolve()
        if not real.is_relative_to(base):
            raise InputError(f"{path}: a symlink that points out of {root}; expected {what} "
                             "to hold its own files (copy the file in)")
        if real.is_dir() and real not in seen:
            seen.add(real)
            todo.extend(real.iterdir())
