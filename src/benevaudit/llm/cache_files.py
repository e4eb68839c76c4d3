"""The request cache's files: its folder, made or refused, and the caches earlier releases
wrote, read once into the current store (:mod:`.store`).

An earlier release kept its requests in one SQLite file (``requests.sqlite``, table
``requests(key, kind, value)``). Its rows are read here and handed back as segment records;
a row that does not decode (a key that is not a request hash, a value that is not JSON) is left
out with a warning, so its request is asked again. A file that cannot be read at all (torn, or
of a format older still) is one error line saying that deleting it loses nothing but time: a
cache holds only replies that a rerun asks for again.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from benevaudit.errors import InputError

log = logging.getLogger(__name__)
_KEY = re.compile(r"^[0-9a-f]{64}$")     # a request key: the sha256 of the request


def unreadable(path: Path, reason: str) -> InputError:
    """The one line for a cache that cannot be read at all."""
    return InputError(f"{path}: a request cache that cannot be read ({reason}); delete it: it "
                      "holds only replies that a rerun asks for again, so deleting it loses "
                      "nothing but time")


def check_sqlite(path: str | Path, key: str) -> None:
    """A request cache: a directory (created if absent), or an earlier release's SQLite file
    (``.sqlite``), which is migrated into the directory beside it; an empty file is none."""
    file = Path(str(path)).expanduser()
    if file.is_dir() or not file.is_file() or not file.stat().st_size:
        return
    with open(file, "rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            raise InputError(f"{key}={path}: not a SQLite database (expected the request "
                             "cache directory benevaudit writes, an earlier release's SQLite "
                             "cache, or a path where it may create a directory)")
    if file.suffix not in (".sqlite", ".sqlite3", ".db"):
        raise InputError(f"{key}={path}: a SQLite file without a .sqlite suffix (expected the "
                         "request cache directory, or a .sqlite file to migrate beside it)")


def ready_folder(path: Path, segments: Path) -> None:
    """``segments`` made under the cache folder ``path``; one error line where a file stands
    in its place or the folder cannot be written."""
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: a file, not a request cache folder (expected the folder "
                         "benevaudit writes, or an earlier release's .sqlite file)")
    try:
        segments.mkdir(parents=True, exist_ok=True)
    except OSError as e:       # segments/ a file, no permission
        raise unreadable(path, e.strerror or type(e).__name__) from None


def legacy_rows(legacy: Path) -> list[tuple[str, str, object]]:
    """(key, kind, value) of every row of an earlier release's SQLite cache that decodes."""
    try:
        db = sqlite3.connect(f"file:{legacy}?mode=ro", uri=True)
        db.text_factory = bytes     # text that is not UTF-8 is one row's fault, not the file's
        try:
            rows = db.execute("SELECT key, kind, value FROM requests").fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:     # torn ("malformed"), not a database, no requests table
        # SQLite's words, never a row's text (some messages quote it after "with text")
        reason = (str(e).splitlines() or [type(e).__name__])[0].split(" with text")[0]
        raise unreadable(legacy, f"an earlier release's SQLite cache: {reason}") from None
    except UnicodeDecodeError:     # its schema (table and column names) is not UTF-8 text
        raise unreadable(legacy, "an earlier release's SQLite cache: a schema that is not "
                                 "UTF-8 text") from None
    kept: list[tuple[str, str, object]] = []
    for key, kind, value in rows:
        key, kind, decoded = _text(key), _text(kind), _decoded(value)
        if key is not None and _KEY.match(key) and kind is not None and decoded is not _BAD:
            kept.append((key, kind, decoded))
    if len(kept) < len(rows):
        log.warning("%s: %d of its %d cached replies do not decode; left out, they are asked "
                    "again", legacy, len(rows) - len(kept), len(rows))
    return kept


_BAD = object()


def _text(value: object) -> str | None:
    """A column read as bytes, as text; None where it is not UTF-8 text."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _decoded(value: object) -> object:
    if not isinstance(value, (str, bytes)):
        return _BAD
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return _BAD


def migrate(legacy: Path, target: Path, encode: Callable[[str, str, object], bytes],
            write: Callable[[Path, bytes], None]) -> None:
    """The rows of a SQLite cache as one segment ``target``, written whole (several jobs
    migrating at once write the same content)."""
    if target.exists():
        return
    write(target, b"".join(encode(k, kind, v) for k, kind, v in legacy_rows(legacy)))
