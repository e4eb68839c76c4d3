"""Reading the files a user passes, each as what it should be.

One reader per format: text (UTF-8, not empty, no binary), JSON, YAML, CSV, Parquet, PyTorch
checkpoints and transformers model directories, chat templates (the request cache's files are
checked in ``llm/cache_files.py``). A file that is missing, empty, torn, of another format, not
UTF-8 where text is expected, or without the columns it needs raises one
:class:`~benevaudit.errors.InputError` that names the file (and its option, line or row) and
what was expected. Messages never quote the file's content: corpora and label sheets may hold
sensitive dialogue.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from benevaudit.errors import InputError, OutputError

PARQUET_MAGIC = b"PAR1"    # the first and last four bytes of every Parquet file
_PLAIN_NAME = re.compile(r"^[A-Za-z_][\w.-]{0,39}$")   # a header: short names, no spaces


def where(path: str | Path, key: str | None = None) -> str:
    """How a message names the file: ``key=path`` for an option's value, else the path."""
    return f"{key}={path}" if key else str(path)


def require_file(path: str | Path, key: str | None, expected: str) -> Path:
    """The path of an existing, non-empty regular file; else an error naming it."""
    file, name = Path(str(path)).expanduser(), where(path, key)
    if file.is_dir():
        raise InputError(f"{name}: a directory, not a file (expected {expected})")
    if not file.is_file():
        raise InputError(f"{name}: no such file (expected {expected})")
    if file.stat().st_size == 0:
        raise InputError(f"{name}: the file is empty (expected {expected})")
    return file


def read_text(path: str | Path, key: str | None = None, expected: str = "a text file") -> str:
    """The file as UTF-8 text: not empty, not binary (a NUL byte), not another encoding."""
    file = require_file(path, key, expected)
    data = file.read_bytes()
    name = where(path, key)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{name}:line {line}: not UTF-8 text (byte {e.start}); expected "
                         f"{expected}") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{name}:line {line}: binary data (a NUL byte), not text; expected "
                         f"{expected}")
    if not text.strip():
        raise InputError(f"{name}: the file holds only blank space (expected {expected})")
    return text


def read_json(path: str | Path, key: str | None = None, expected: str = "a JSON file") -> Any:
    """The decoded JSON value of a UTF-8 file."""
    text = read_text(path, key, expected)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where(path, key)}:line {e.lineno}: not valid JSON ({e.msg}, "
                         f"column {e.colno}); expected {expected}") from None


def read_yaml(path: str | Path, key: str | None = None, expected: str = "a YAML file") -> Any:
    """The decoded YAML of a UTF-8 file (a run's ``.hydra/config.yaml``)."""
    text = read_text(path, key, expected)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or type(e).__name__
        raise InputError(f"{where(path, key)}{line}: not valid YAML ({problem}); expected "
                         f"{expected}") from None


def describe_columns(columns: Sequence[Any]) -> str:
    """The header as found, or only its size when it does not look like one (a text file read as
    CSV has a sentence for a header, which must not be printed)."""
    names = [str(c) for c in columns]
    if names and all(_PLAIN_NAME.match(n) for n in names):
        return f"found {names}"
    return f"found {len(names)} column(s) that do not look like a header"


def require_columns(columns: Sequence[Any], required: Sequence[str], name: str,
                    expected: str) -> None:
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputError(f"{name}: missing column(s) {missing}; expected {expected}, "
                         f"{describe_columns(columns)}")


def read_csv(path: str | Path, key: str | None, required: Sequence[str], expected: str,
             min_rows: int = 1, **options: Any) -> Any:
    """A UTF-8 CSV as a pandas DataFrame with at least ``required`` columns and ``min_rows``
    rows; ``options`` go to ``pandas.read_csv`` (dtype, keep_default_na, ...)."""
    import pandas as pd  # pandas loads on first use; the core stays light

    text = read_text(path, key, expected)
    name = where(path, key)
    try:
        frame = pd.read_csv(io.StringIO(text), **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        reason = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise InputError(f"{name}: not a readable CSV ({reason}); expected {expected}") from None
    if "index_col" not in options and not isinstance(frame.index, pd.RangeIndex):
        # pandas takes the extra leading fields of rows longer than the header as an index
        raise InputError(f"{name}: line 2 has more fields than the header ({len(frame.columns)})"
                         f"; expected {expected}")
    require_columns(list(frame.columns), required, name, expected)
    if len(frame) < min_rows:
        raise InputError(f"{name}: a header but no rows (expected {expected})")
    return frame


def csv_text(path: str | Path, key: str | None, expected: str) -> io.StringIO:
    """A UTF-8 CSV opened for :mod:`csv` readers (checked as text first)."""
    return io.StringIO(read_text(path, key, expected), newline="")


def check_parquet_file(path: str | Path, key: str | None, expected: str) -> Path:
    """A non-empty file with Parquet's markers at both ends (without reading it)."""
    file = require_file(path, key, expected)
    with open(file, "rb") as f:
        head = f.read(4)
        f.seek(max(file.stat().st_size - 4, 0))
        tail = f.read(4)
    if head != PARQUET_MAGIC or tail != PARQUET_MAGIC or file.stat().st_size < 12:
        raise InputError(f"{where(path, key)}: not a Parquet file (no PAR1 markers at its start "
                         f"and end: another format, or cut short); expected {expected}")
    return file


def read_parquet(path: str | Path, key: str | None, expected: str,
                 required: Sequence[str] = ()) -> Any:
    """A Parquet file as a pandas DataFrame with at least ``required`` columns."""
    # pandas, pyarrow are heavy and load on first use
    import pandas as pd
    import pyarrow as pa

    file = check_parquet_file(path, key, expected)
    name = where(path, key)
    try:
        frame = pd.read_parquet(file)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:   # torn, or text not UTF-8
        raise InputError(f"{name}: not a readable Parquet file ({type(e).__name__}); expected "
                         f"{expected}") from None
    require_columns(list(frame.columns), required, name, expected)
    return frame


def check_torch_file(key: str, path: Path) -> None:
    """A ``.ckpt`` must be what ``torch.save`` writes (a zip holding ``data.pkl``, or the legacy
    pickle), not a text file or a torn copy, so it fails here instead of inside unpickling."""
    expected = "a PyTorch checkpoint written by train.py"
    require_file(path, key, expected)
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError):   # torn
            names = []
        if any(n.endswith("data.pkl") for n in names):
            return
        raise InputError(f"{key}={path}: a zip archive without data.pkl (or cut short), not a "
                         "PyTorch checkpoint (expected a .ckpt written by train.py)")
    with open(path, "rb") as f:
        if f.read(1) == b"\x80":   # the legacy (pre-zip) torch.save format is a raw pickle
            return
    raise InputError(f"{key}={path}: not a PyTorch checkpoint (expected a .ckpt written by "
                     "train.py, a zip archive; this file is neither that nor a pickle, or it "
                     "was cut short)")


def check_model_dir(key: str, path: Path) -> None:
    """A transformers model directory: parseable ``config.json``, weights and a tokenizer."""
    try:
        read_json(path / "config.json", expected="a transformers model config")
    except InputError as e:
        raise InputError(f"{key}: {e}") from None
    weights = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
               "pytorch_model.bin.index.json")
    if not any((path / w).is_file() for w in weights):
        raise InputError(f"{key}: {path} has config.json but no weights (expected one of "
                         f"{', '.join(weights)})")
    if not any((path / t).is_file() for t in ("tokenizer.json", "vocab.txt")):
        raise InputError(f"{key}: {path} has no tokenizer (expected tokenizer.json or vocab.txt "
                         "beside config.json, as train.py saves them)")


def check_located(key: str, located: tuple[Path, Path | None]) -> None:
    """``ckpt=`` as located: its weights, and its training run's saved config when there is one
    (evaluate, attribute and detect reuse that run's settings)."""
    weights, run = located
    check_weights(key, weights)
    saved = run / ".hydra" / "config.yaml" if run is not None else None
    if saved is not None and saved.is_file():
        config = read_yaml(saved, expected="the training run's saved Hydra config")
        if not isinstance(config, dict):
            raise InputError(f"{saved}: expected a mapping (the training run's saved Hydra "
                             f"config), got {type(config).__name__}")


def check_weights(key: str, path: Path) -> None:
    """The located weights of ``ckpt=``: a Lightning checkpoint or a model directory."""
    if path.is_file():
        check_torch_file(key, path)
    else:
        check_model_dir(key, path)


def check_template_file(template: Any, key: str) -> None:
    """A chat template given as a file (not inline Jinja, which has braces) must read as UTF-8
    text; a path that is not there would otherwise be taken for the template itself."""
    if template and "{" not in str(template):
        read_text(Path(str(template)).expanduser(), key, "a Jinja chat template (.jinja)")


def check_llm_files(chat_template: str | None, model_path: str | None, key: str) -> None:
    """An llm block's files: its chat template file, and a local model directory (a path, not
    a hub id) that exists and, where it has one, a config.json that reads as JSON."""
    check_template_file(chat_template, f"{key}.chat_template")
    model = model_path or ""
    if not model.startswith(("/", "./", "../", "~")):
        return
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise InputError(f"{key}.model={model}: no such directory (expected a model directory "
                         "with config.json, weights and tokenizer files, or a hub id)")
    if (folder / "config.json").exists():
        read_json(folder / "config.json", expected="the model's transformers config")


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """``write(temporary path)``, flushed to disk, then renamed onto ``path``.

    A run killed mid-write, or a write that fails (a full disk, a file-size limit), leaves the
    old file or none, never a torn one: ``report.py`` and a rerun read only whole files. The
    temporary name keeps the suffix, for writers that pick the format from it (``savefig``).
    A failed write raises one :class:`OutputError` naming the file.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        reason = _reason(e)
        raise OutputError(f"{path}: could not be written ({reason}); no partial file was left "
                          "(check free space and file-size limits, then rerun)") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _reason(error: OSError) -> str:
    """The system's words for a failed write; pyarrow puts the errno only in its message."""
    found = re.search(r"errno (\d+)", str(error), re.IGNORECASE)
    lines = str(error).strip().splitlines()
    return (os.strerror(int(found.group(1))) if found
            else error.strerror or (lines[-1] if lines else type(error).__name__))


def write_text_atomically(path: str | Path, text: str) -> Path:
    """A UTF-8 text file written as :func:`write_atomically` does."""
    return write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_parquet(table: Any, path: str | Path) -> Path:
    """A pyarrow ``table`` as a Parquet file, written as :func:`write_atomically` does."""
    import pyarrow.parquet as pq   # pyarrow is heavy and loads on first use
    return write_atomically(path, lambda tmp: pq.write_table(table, tmp))
