"""Resumable attribution: each finished batch of a long attribution pass is kept on disk, so an
interrupted run (integrated gradients over a large test split on a CPU takes hours) picks up
where it stopped, and later passes over the same dialogues (the heatmap, ``attribute.py`` on the
same checkpoint) cost nothing.

Layout: ``<root>/<model fingerprint>/<method>-<settings hash>/`` holding ``key.json`` (what the
folder is for) and one Parquet shard per finished batch, each written to a temporary name and
renamed, so a killed run leaves only whole shards. A stored result is reused only when the
dialogue's id *and* the token ids fed to the model match, so an edited, re-rendered or
differently truncated dialogue is recomputed. Batch size and token budget are not part of the
key: they change no value beyond float rounding.

Results are checked before they are stored (one relevance per word, every number finite): a
failed one is left out and computed again next time. A shard that does not read back whole (cut
by a full disk, or written by a faulty writer) is removed with a warning and its dialogues are
computed again. A cache folder that cannot be used at all is one error line saying that deleting
it loses nothing but time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.errors import InputError
from benevaudit.schema import Dialogue
from benevaudit.text import Span

log = logging.getLogger(__name__)
FORMAT = 1  # bump when the relevance, merge or normalisation rules change: old results go stale


def model_fingerprint(model: Any) -> str:
    """A hash of every parameter and buffer (names, shapes, dtypes, bytes): 32 hex digits."""
    import torch  # torch is heavy and loads on first use

    h = hashlib.blake2b(digest_size=16)
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous().reshape(-1)
        h.update(f"{name}:{tuple(tensor.shape)}:{t.dtype};".encode())
        h.update(t.view(torch.uint8).numpy())  # the raw bytes, whatever the dtype
    return h.hexdigest()


def ids_digest(input_ids: Sequence[int]) -> str:
    """Hash of the token ids a dialogue was attributed from."""
    return hashlib.blake2b(np.asarray(input_ids, dtype=np.int64).tobytes(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class AttributionCache:
    """Where a model's attribution results are kept: ``root/<fingerprint>/``."""

    root: Path
    fingerprint: str

    @classmethod
    def for_model(cls, root: str | Path, model: Any) -> AttributionCache:
        return cls(Path(root), model_fingerprint(model))

    def store(self, method: str, settings: Mapping[str, Any]) -> AttributionStore:
        key = {"format": FORMAT, "model": self.fingerprint, "method": method, **settings}
        digest = hashlib.blake2b(json.dumps(key, sort_keys=True).encode(),
                                 digest_size=8).hexdigest()
        return AttributionStore(self.root / self.fingerprint / f"{method}-{digest}", key)


class AttributionStore:
    """The finished results of one (model, method, settings)."""

    def __init__(self, folder: Path, key: Mapping[str, Any]) -> None:
        self.folder = folder
        key_file = folder / "key.json"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not key_file.exists():
                key_file.write_text(json.dumps(dict(key), indent=1, sort_keys=True) + "\n")
        except OSError as e:     # a file where a folder should be, no permission
            raise InputError(f"{folder}: an attribution cache that cannot be used "
                             f"({e.strerror or type(e).__name__}); delete it: it holds only "
                             "results computed again, so deleting it loses nothing but "
                             "time") from None

    def load(self) -> dict[str, tuple[str, DialogueAttribution]]:
        """id -> (token-id digest, attribution) for every stored dialogue; a shard that does
        not read back whole is removed (its dialogues are computed again)."""
        done: dict[str, tuple[str, DialogueAttribution]] = {}
        for shard in sorted(self.folder.glob("part-*.parquet")):
            try:
                rows = {row["id"]: (row["ids_digest"], _from_row(row))
                        for row in pq.read_table(shard).to_pylist()}
            except (pa.ArrowException, OSError, KeyError, TypeError, ValueError) as e:
                log.warning("%s: an attribution shard that does not read back (%s); removed, "
                            "its dialogues are computed again", shard, type(e).__name__)
                shard.unlink(missing_ok=True)
                continue
            done.update(rows)
        return done

    def append(self, attributions: Sequence[DialogueAttribution]) -> None:
        """Write one shard of the results that check out, atomically."""
        kept = [a for a in attributions if whole(a)]
        if len(kept) < len(attributions):
            log.warning("%s: %d attribution results with non-finite or mismatched values are "
                        "not stored; they are computed again next time", self.folder,
                        len(attributions) - len(kept))
        attributions = kept
        if not attributions:
            return
        # after the last shard's number (a removed shard leaves a gap; a count would reuse one)
        numbers = [int(f.name.split("-")[1]) for f in self.folder.glob("part-*.parquet")
                   if f.name.split("-")[1].isdigit()]
        n = max(numbers, default=-1) + 1
        final = self.folder / f"part-{n:06d}-{os.getpid()}.parquet"
        tmp = final.with_suffix(".tmp")
        pq.write_table(pa.Table.from_pylist([_to_row(a) for a in attributions]), tmp)
        os.replace(tmp, final)


def read_back(store: AttributionStore, dialogues: Sequence[Dialogue],
              input_ids: Sequence[Sequence[int]],
              labels: Sequence[int | None]) -> list[DialogueAttribution | None]:
    """Stored results in ``dialogues`` order; None where a dialogue is new or has changed (its
    token ids or its label)."""
    done = store.load()
    out: list[DialogueAttribution | None] = []
    for d, ids, label in zip(dialogues, input_ids, labels):
        digest, stored = done.get(d.id, (None, None))
        fresh = stored is not None and digest == ids_digest(ids) and stored.label == label
        out.append(stored if fresh else None)
    return out


def whole(a: DialogueAttribution) -> bool:
    """One relevance, span and token list per word, and every number finite."""
    n = len(a.words)
    return (len(a.spans) == len(a.pieces) == len(np.asarray(a.relevance)) == n
            and bool(np.isfinite(np.asarray(a.relevance, dtype=np.float64)).all())
            and bool(np.isfinite(np.asarray(a.probs, dtype=np.float64)).all()))


def _to_row(a: DialogueAttribution) -> dict[str, Any]:
    return {"id": a.id, "ids_digest": ids_digest(a.input_ids), "label": a.label,
            "target": a.target, "probs": [float(p) for p in a.probs],
            "input_ids": list(a.input_ids), "words": list(a.words),
            "spans": [[s.start, s.end, s.turn] for s in a.spans],
            "speakers": [s.speaker for s in a.spans],
            "relevance": [float(r) for r in a.relevance], "pieces": a.pieces}


def _from_row(row: Mapping[str, Any]) -> DialogueAttribution:
    spans = [Span(w, s, e, t, sp) for w, (s, e, t), sp
             in zip(row["words"], row["spans"], row["speakers"])]
    return DialogueAttribution(
        id=row["id"], label=row["label"], target=row["target"],
        probs=np.asarray(row["probs"], dtype=np.float32), input_ids=list(row["input_ids"]),
        words=list(row["words"]), spans=spans, relevance=np.asarray(row["relevance"]),
        pieces=[list(p) for p in row["pieces"]])
