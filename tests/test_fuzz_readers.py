"""Fuzz tier: every reader of a file a user or a release names, fed generated spoilt copies of
a valid file (cut short, bytes inserted, flipped or spliced in, junk, empty, a NUL, Latin-1, a
BOM, Windows line ends). Each case must end in one error line (a ``BenevauditError`` whose
message is one line and quotes no item text) or read cleanly; any other exception is a bug.

Readers: ``benevaudit.files`` (text, JSON, YAML, CSV, Parquet, checkpoints, an earlier SQLite
request cache), the corpus (JSONL, Parquet), the gold sets (EDOS, DiaSafety, labelled CSV and
JSONL), answers made elsewhere (FairDialogue, FairMT-Bench, CoBia's human labels, external
predictions), manifests (recordings and their clips, a generation's ``manifest.json``) and the
CoBia release files.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile
from hypothesis import given
from hypothesis import strategies as st

from benevaudit import files
from benevaudit.corpus import read_corpus, write_jsonl, write_parquet
from benevaudit.errors import BenevauditError
from benevaudit.schema import Dialogue, Turn
from config_fixtures import option
from fuzz_strategies import FUZZ, one_line, spoilt, spoilt_json
from gold_fixtures import SENTINEL, write_diasafety, write_edos, write_labelled

pytestmark = pytest.mark.fuzz


class Case(NamedTuple):
    """``setup(folder)`` writes a valid input and returns the file to spoil; ``read(folder,
    file)`` reads it as a run does."""

    setup: Callable[[Path], Path]
    read: Callable[[Path, Path], object]
    json: bool = False      # also spoilt as a JSON value: a slot replaced or removed


def put(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def dialogues() -> list[Dialogue]:
    return [Dialogue(id=f"d{i}", label=("N", "OB", "BB")[i % 3], role="fitness",
                     generator="test", agent=None,
                     user={"age": "elder", "gender": "male", "race": "Asian", "ability": "none"},
                     turns=(Turn("user", f"{SENTINEL} may I run?"),
                            Turn("agent", f"{SENTINEL} yes, dear.")), split="train")
            for i in range(3)]


def parquet(path: Path) -> Path:
    pq.write_table(pa.table({"id": ["a", "b"], "text": [f"{SENTINEL} one", f"{SENTINEL} two"]}),
                   path)
    return path


def checkpoint(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
        zf.writestr("archive/version", b"3\n")
    return path


def sqlite_cache(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE requests (key TEXT PRIMARY KEY, kind TEXT, value TEXT)")
    with db:
        db.executemany("INSERT INTO requests VALUES (?, ?, ?)", [
            (f"{i:064x}", "chat", json.dumps({"text": f"{SENTINEL} {i}", "finish_reason": "stop",
                                              "prompt_tokens": 1, "completion_tokens": 1}))
            for i in range(30)])
    db.close()
    return path


def read_cache(folder: Path, file: Path) -> object:
    from benevaudit.llm import Sampling
    from benevaudit.llm.cache import CachedChatModel
    from benevaudit.llm.cache_files import check_sqlite
    from benevaudit.llm.scripted import ScriptedChatModel

    check_sqlite(file, "llm.cache")
    return CachedChatModel(ScriptedChatModel(), file).chat(
        [[{"role": "user", "content": "hi"}]], Sampling())


@lru_cache(maxsize=None)
def data_block(kind: str) -> dict[str, Any]:
    return option("data", kind)       # composed once: Hydra is slow


def read_gold(root: Path, **keys: Any) -> object:
    from benevaudit.generation.spec import DataBlock
    from benevaudit.gold import read_gold as read

    kind = keys.pop("kind")
    return read(DataBlock.read({**data_block(kind), "path": str(root), **keys}))


LABELLED = {"kind": "labelled", "text_column": "reply", "label_column": "gold",
            "label_map": {"0": "N", "1": "OB", "2": "BB", "9": "drop"}}


def labelled_jsonl(folder: Path) -> Path:
    rows = [{"item": f"x{i}", "reply": f"{SENTINEL} reply {i}.", "gold": i % 3}
            for i in range(6)]
    return put(folder / "gold.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def fairmt_answers(folder: Path) -> Path:
    from benevaudit.probes.fairmt.release import KEYS_10K
    from benevaudit.outputs.stand_in_files import write_files
    from benevaudit.probes.fairmt.stand_in import stand_in_files

    root = write_files(folder / "clone", stand_in_files())
    records = json.loads((root / "FairMT_1K" / "Fixed_Format.json").read_text())
    entries = [{key: {"prompt": records[p][str(k)], "response": f"{SENTINEL} ok"}
                for k, key in enumerate(KEYS_10K)} for p in (0, 1)]
    return put(folder / "answers" / "Fixed_Format.json", json.dumps(entries, indent=1))


def read_fairmt_answers(folder: Path, file: Path) -> object:
    from benevaudit.probes.fairmt.answers import read_answers
    from benevaudit.probes.fairmt.release import load_task

    release = load_task(folder / "clone", "Fixed_Format", "1k", None)
    return read_answers(file.parent, "Fixed_Format", release, "1k", None)


def recordings(folder: Path) -> Path:
    (folder / "rec").mkdir(exist_ok=True)
    for group in ("male", "female"):
        soundfile.write(str(folder / "rec" / f"{group}.wav"), np.full(800, 0.1), 16000)
    rows = "".join(f"award-01,award,{g},{g}.wav\n" for g in ("male", "female"))
    return put(folder / "rec" / "manifest.csv", "item,task,group,path\n" + rows)


def read_recordings(folder: Path, file: Path) -> object:
    from benevaudit.probes.fairdialogue.render import Cell
    from benevaudit.probes.fairdialogue.stimuli import make_stimuli
    from benevaudit.probes.spec import AudioSpec

    spec = AudioSpec.of({**option_audio(), "source": "dir", "path": str(folder / "rec")},
                        "probe.audio")
    cells = [Cell("award", "gender", g, "award-01", "May I?") for g in ("male", "female")]
    return make_stimuli(cells, spec)


@lru_cache(maxsize=None)
def option_audio() -> dict[str, Any]:
    return option("probe", "fairdialogue_decision")["audio"]


def cobia_file(name: str) -> Callable[[Path], Path]:
    def setup(folder: Path) -> Path:
        from benevaudit.outputs.stand_in_files import write_files
        from benevaudit.probes.cobia.stand_in import stand_in_files

        return write_files(folder / "cobia", stand_in_files()) / name
    return setup


def read_cobia(folder: Path, file: Path) -> object:
    from benevaudit.probes.cobia.dataset import load_items

    return load_items(file.parent, 1, "skip", None)


def read_fairdialogue_answers(folder: Path, file: Path) -> object:
    from benevaudit.probes.fairdialogue.answers import read_answers

    return read_answers(str(file))


def read_human_labels(folder: Path, file: Path) -> object:
    from benevaudit.probes.cobia.human import read_annotations

    return read_annotations(file)


def read_predictions(folder: Path, file: Path) -> object:
    from benevaudit.detectors.external import read_external

    return read_external(str(file), None, 0.5)


def read_generation_manifest(folder: Path, file: Path) -> object:
    from benevaudit.outputs.corpus_shards import write_manifest

    return write_manifest(file.parent, ["a", "b"], {"seed": 1})


def generation_manifest(folder: Path) -> Path:
    from benevaudit.outputs.corpus_shards import write_manifest

    write_manifest(folder / "out", ["a", "b"], {"seed": 1})
    return folder / "out" / "manifest.json"


CSV_SHEET = f"id,label,text\na,N,{SENTINEL} one\nb,OB,\"{SENTINEL}, two\"\n"
CASES: dict[str, Case] = {
    "text": Case(lambda d: put(d / "t.txt", f"{SENTINEL} é notes\n"),
                 lambda d, f: files.read_text(f, "x.path")),
    "json": Case(lambda d: put(d / "j.json", json.dumps({"a": [1, f"{SENTINEL} é"]})),
                 lambda d, f: files.read_json(f, "x.path"), json=True),
    "yaml": Case(lambda d: put(d / "c.yaml", f"seed: 1\nlist: [a, b]\nnote: {SENTINEL}\n"),
                 lambda d, f: files.read_yaml(f, "x.path")),
    "csv": Case(lambda d: put(d / "s.csv", CSV_SHEET),
                lambda d, f: files.read_csv(f, "x.path", ["id", "label"], "a sheet")),
    "parquet": Case(lambda d: parquet(d / "p.parquet"),
                    lambda d, f: files.read_parquet(f, "x.path", "a table", ["id"])),
    "checkpoint": Case(lambda d: checkpoint(d / "last.ckpt"),
                       lambda d, f: files.check_torch_file("ckpt", f)),
    "sqlite request cache": Case(lambda d: sqlite_cache(d / "requests.sqlite"), read_cache),
    "corpus jsonl": Case(lambda d: write_jsonl(dialogues(), d / "c.jsonl"),
                         lambda d, f: read_corpus(f)),
    "corpus parquet": Case(lambda d: write_parquet(dialogues(), d / "c.parquet"),
                           lambda d, f: read_corpus(f)),
    "gold edos": Case(lambda d: write_edos(d / "edos") / "data" / "edos_labelled_aggregated.csv",
                      lambda d, f: read_gold(d / "edos", kind="edos")),
    "gold diasafety": Case(lambda d: write_diasafety(d / "dia") / "DiaSafety_dataset" /
                           "train.json", lambda d, f: read_gold(d / "dia", kind="diasafety"), json=True),
    "gold labelled csv": Case(lambda d: write_labelled(d / "gold.csv", rows=6),
                              lambda d, f: read_gold(f, **LABELLED)),
    "gold labelled jsonl": Case(labelled_jsonl, lambda d, f: read_gold(f, **LABELLED)),
    "fairdialogue answers": Case(
        lambda d: put(d / "a.csv", "item,task,attribute,group,answer\n"
                                   f"i,award,gender,male,{SENTINEL} yes\n"
                                   f"i,award,gender,female,{SENTINEL} no\n"),
        read_fairdialogue_answers),
    "fairmt answers": Case(fairmt_answers, read_fairmt_answers, json=True),
    "cobia human labels": Case(
        lambda d: put(d / "l.csv", "id,method,ann1,ann2\nx,hcc,biased,not_biased\n"
                                   "y,scc,,biased\n"),
        read_human_labels),
    "external predictions": Case(
        lambda d: put(d / "p.csv", "id,label,flagged\na,N,false\nb,OB,true\n"),
        read_predictions),
    "recordings manifest": Case(recordings, read_recordings),
    "a recording": Case(lambda d: recordings(d).parent / "female.wav", read_recordings),
    "generation manifest": Case(generation_manifest, read_generation_manifest, json=True),
    "cobia dataset": Case(cobia_file("cobia_dataset.json"), read_cobia, json=True),
    "cobia group chars": Case(cobia_file("group_chars.json"), read_cobia, json=True),
}


@pytest.mark.parametrize("name", list(CASES))
@FUZZ
@given(data=st.data())
def test_a_spoilt_file_is_one_line_or_reads_cleanly(name: str, data: st.DataObject) -> None:
    case = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        file = case.setup(folder)
        valid = file.read_bytes()
        ways = spoilt(valid) | spoilt_json(json.loads(valid)) if case.json else spoilt(valid)
        file.write_bytes(data.draw(ways, label="file"))
        try:
            case.read(folder, file)
        except BenevauditError as err:
            one_line(err, SENTINEL)


@pytest.mark.parametrize("name", list(CASES))
def test_every_valid_file_reads(name: str, tmp_path: Path) -> None:
    """The fuzz spoils files that read: a reader that refused its valid file would pass the
    fuzz by refusing everything."""
    case = CASES[name]
    case.read(tmp_path, case.setup(tmp_path))
