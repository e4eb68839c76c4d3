"""The request cache's store: append-only segment files, one per writing process, merged on read.

Why this design: at paper scale many jobs on many nodes share one cache on a network file system
(NFS, Lustre). A database needs locks or host-shared memory there (SQLite's WAL mode does not
work on a network file system; its locks can fail with "database is locked" or corrupt the
file). Here no file ever has two writers, so no lock is ever taken:

- each process appends its replies to its own segment, ``segments/<host>-<pid>-<random>.log``,
  created with ``O_EXCL``; one ``write`` per batch;
- every record is framed by a fixed-size header with its key, length and CRC-32, so a reader
  takes only whole records: a tail cut by SIGKILL, a disk-full write, or data a network client
  has not flushed yet reads as absent (a miss, sent again), never as a wrong reply. A writer
  whose write failed never appends to that segment again, so damage is only ever at a tail;
- a reader indexes every segment once (headers only: key -> segment, offset, length), then
  answers from the index with a slice of the memory-mapped segment per value, the values of
  one call parsed as one JSON array. On a miss it looks again at the segments that grew or
  appeared, so replies other jobs wrote meanwhile are found;
- no file is fsynced: the checksum already turns a record lost to a node crash into a miss, and
  NFS clients flush on close.

Reads beat the SQLite file this replaces (``benchmarks/bench_serving.py``): an in-memory index,
a slice of a memory-mapped segment and one parse per call, against a B-tree lookup plus SQL and
a parse per row. ``compact`` merges the segments of finished jobs into one (temporary name, then
rename), for a cache used over months.

A SQLite cache of earlier releases (``requests.sqlite``) is migrated on first use into the
directory without the suffix (:mod:`.cache_files`; the file is left as it was). A record whose
checksum holds but whose value does not decode is dropped with a warning and asked again; its
new record is read after (segments are indexed oldest first). A cache that cannot be read at
all is one error line: deleting it loses nothing but time.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import threading
import uuid
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from benevaudit.llm.cache_files import migrate, ready_folder, unreadable

log = logging.getLogger(__name__)
LEGACY_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SEGMENTS = "segments"
MIGRATED = "migrated-from-sqlite.log"
MAGIC = b"BVC1"
HEADER = 4 + 1 + 64 + 1 + 8 + 1 + 10 + 1      # MAGIC key crc32 length\n
_MAX_OPEN = 128


class Entry(NamedTuple):
    segment: str
    offset: int        # of the payload
    length: int
    crc: int


def store_dir(path: str | Path) -> Path:
    """The cache directory a configured path names: itself, or for a ``.sqlite`` path (the
    earlier single-file cache) the directory beside it without the suffix."""
    path = Path(path).expanduser()
    return path.with_suffix("") if path.suffix in LEGACY_SUFFIXES else path


def encode(key: str, kind: str, value: object) -> bytes:
    """One record: the header, then ``{"kind", "value"}`` as JSON, then a newline."""
    body = json.dumps({"kind": kind, "value": value}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    head = b"%s %s %08x %010d\n" % (MAGIC, key.encode("ascii"), zlib.crc32(body), len(body))
    return head + body + b"\n"


def records(data: bytes, start: int = 0) -> Iterator[tuple[str, Entry, int]]:
    """(key, entry, end offset) of each whole-framed record from ``start``; stops at the first
    header that is not whole (a tail not yet written, or cut)."""
    pos = start
    while pos + HEADER <= len(data):
        head = data[pos:pos + HEADER]
        try:
            magic, key, crc, length = head.split()
            if magic != MAGIC or len(key) != 64 or head[-1:] != b"\n":
                return
            size, checksum = int(length), int(crc, 16)
        except ValueError:
            return
        end = pos + HEADER + size + 1
        if end > len(data):
            return
        yield key.decode("ascii"), Entry("", pos + HEADER, size, checksum), end
        pos = end


class RequestCache:
    """A key -> JSON value store shared by many processes on many hosts; no locks."""

    def __init__(self, path: str | Path) -> None:
        self.path = store_dir(path)
        self.segments = self.path / SEGMENTS
        ready_folder(self.path, self.segments)
        self._index: dict[str, Entry] = {}
        self._seen: dict[str, int] = {}           # segment -> bytes indexed so far
        self._maps: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()
        self._own: tuple[int, int, str] | None = None   # (pid, fd, name) of this writer's segment
        self._size = 0
        legacy = Path(path).expanduser()
        if legacy != self.path and legacy.is_file() and legacy.stat().st_size:
            migrate(legacy, self.segments / MIGRATED, encode, _write_whole)
        self.refresh()

    def refresh(self) -> None:
        """Index what other writers appended or created since the last look; oldest segment
        first, so of two records for one key the later written is read."""
        with self._lock:
            for _, name, size in sorted(self._listing()):
                if size > self._seen.get(name, 0):
                    self._index_tail(name)

    def _listing(self) -> list[tuple[int, str, int]]:
        """(mtime, name, size) of every segment."""
        found = []
        try:
            for entry in os.scandir(self.segments):
                if entry.name.startswith(".") or not entry.name.endswith(".log"):
                    continue
                try:
                    stat = entry.stat()
                except FileNotFoundError:     # compacted away meanwhile
                    continue
                found.append((stat.st_mtime_ns, entry.name, stat.st_size))
        except OSError as e:     # the folder gone or not readable
            raise unreadable(self.path, e.strerror or type(e).__name__) from None
        return found

    def _index_tail(self, name: str) -> None:
        start = self._seen.get(name, 0)
        try:
            with open(self.segments / name, "rb") as f:
                f.seek(start)
                data = f.read()
        except FileNotFoundError:       # compacted away meanwhile
            return
        end = start
        for key, entry, stop in records(data):
            self._index[key] = entry._replace(segment=name, offset=start + entry.offset)
            end = start + stop
        self._seen[name] = end

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        """Values of the keys present; absent or damaged keys are simply missing."""
        found = self._read(keys)
        if len(found) < len(keys):
            self.refresh()
            found.update(self._read([k for k in keys if k not in found]))
        return found

    def drop(self, keys: Sequence[str], why: str) -> None:
        """Forget these keys' records (a value that does not decode, or not as a reply of its
        kind): each reads as a miss, is asked again, and its new record is read after."""
        with self._lock:
            gone = [k for k in keys if self._index.pop(k, None) is not None]
        if gone:
            log.warning("%s: %d cached replies %s; dropped, they are asked again", self.path,
                        len(gone), why)

    def _read(self, keys: Sequence[str]) -> dict[str, object]:
        hits: list[str] = []
        bodies: list[bytes] = []
        with self._lock:
            for key in keys:
                entry = self._index.get(key)
                if entry is None:
                    continue
                segment, offset, length, crc = entry
                view = self._maps.get(segment)
                if view is None or len(view) < offset + length:
                    try:
                        view = self._map(segment, offset + length)
                    except (FileNotFoundError, ValueError):
                        continue
                body = view[offset:offset + length]
                if len(body) == length and zlib.crc32(body) == crc:
                    hits.append(key)
                    bodies.append(body)
        if not bodies:
            return {}
        # one parse per call: json.loads' own cost per call (encoding sniffing, whitespace
        # matching) is as large as parsing a reply, so a call's records are read as one array
        try:
            parsed = json.loads(b"[" + b",".join(bodies) + b"]")
        except (ValueError, RecursionError):   # some record does not decode: each on its own
            parsed = [_record(body) for body in bodies]
        found = {key: record["value"] for key, record in zip(hits, parsed, strict=True)
                 if isinstance(record, dict) and "value" in record}
        self.drop([k for k in hits if k not in found], "do not decode")
        return found

    def _map(self, name: str, end: int) -> mmap.mmap:
        """The segment mapped read-only (a slice costs no system call), mapped again when it
        has grown past ``end``; at most ``_MAX_OPEN`` segments stay mapped."""
        view = self._maps.get(name)
        if view is None or len(view) < end:
            if view is not None:
                view.close()
            elif len(self._maps) >= _MAX_OPEN:
                self._maps.pop(next(iter(self._maps))).close()
            fd = os.open(self.segments / name, os.O_RDONLY)
            try:
                view = self._maps[name] = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
        return view

    def put_many(self, kind: str, items: dict[str, object]) -> None:
        """Append the records in one write to this process's own segment."""
        if not items:
            return
        blobs = [(key, encode(key, kind, value)) for key, value in items.items()]
        data = b"".join(blob for _, blob in blobs)
        with self._lock:
            pid, fd, name = self._writer()
            start = self._size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except OSError:
                self._own = None      # a torn tail: never append after it
                os.close(fd)
                raise
            self._size += len(data)
            for key, entry, _ in records(data):
                self._index[key] = entry._replace(segment=name, offset=start + entry.offset)
            self._seen[name] = self._size

    def _writer(self) -> tuple[int, int, str]:
        """This process's segment, opened on first write (and anew in a forked child)."""
        if self._own is None or self._own[0] != os.getpid():
            name = f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:12]}.log"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
            self._own = (os.getpid(), os.open(self.segments / name, flags, 0o644), name)
            self._size = 0
        return self._own

    def compact(self) -> int:
        """Merge every segment into one and remove the merged ones; returns the keys kept.
        Run it when no job writes (a live writer's later records land in its own segment,
        which compaction leaves out if it is created after the merge began)."""
        self.refresh()
        names = sorted({e.segment for e in self._index.values()} | set(self._seen))
        values = self.get_many(list(self._index))
        data = b"".join(encode(k, "merged", v) for k, v in values.items())
        merged = f"merged-{uuid.uuid4().hex[:12]}.log"
        _write_whole(self.segments / merged, data)
        for name in names:
            if name != MIGRATED:
                (self.segments / name).unlink(missing_ok=True)
        self.close()
        self._index, self._seen = {}, {}
        self.refresh()
        return len(values)

    def __len__(self) -> int:
        self.refresh()
        return len(self._index)

    def close(self) -> None:
        with self._lock:
            for view in self._maps.values():
                view.close()
            self._maps = {}
            if self._own is not None and self._own[0] == os.getpid():
                os.close(self._own[1])
            self._own = None


def _record(body: bytes) -> object:
    """One record's ``{"kind", "value"}``, or None where it does not decode."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _write_whole(target: Path, data: bytes) -> None:
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
