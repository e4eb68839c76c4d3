"""The classifier's data: rendered, tokenised dialogues with dynamic padding.

Training batches are grouped by length (shuffled mega-batches sorted by length) so padding to
the longest sequence of a batch wastes little; evaluation batches run longest-first and keep
each dialogue's index so predictions come back in corpus order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from benevaudit.encoders.encoding import encode_texts, pad_batch
from benevaudit.schema import CLASS_INDEX, Dialogue
from benevaudit.text import render_turns


@dataclass
class EncodedSplit(Dataset):
    ids: list[str]
    input_ids: list[list[int]]
    labels: list[int]  # -1 where a dialogue is unlabelled

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"input_ids": self.input_ids[i], "label": self.labels[i], "index": i}


def encode_split(dialogues: Sequence[Dialogue], tokenizer: Any, max_length: int,
                 head_tokens: int) -> EncodedSplit:
    enc = encode_texts(tokenizer, [render_turns(d.turns) for d in dialogues], max_length,
                       head_tokens)
    labels = [CLASS_INDEX[d.label] if d.label is not None else -1 for d in dialogues]
    return EncodedSplit([d.id for d in dialogues], enc.input_ids, labels)


class Collator:
    """Pads a list of items to the longest one (a class, so worker processes can pickle it)."""

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = pad_batch([x["input_ids"] for x in items], self.pad_id)
        batch["labels"] = torch.tensor([x["label"] for x in items], dtype=torch.long)
        batch["index"] = torch.tensor([x["index"] for x in items], dtype=torch.long)
        return batch


class LengthGroupedSampler(Sampler[int]):
    """Random order in which neighbouring indices have similar lengths; reseeded per epoch."""

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int,
                 mega: int = 50) -> None:
        self.lengths, self.batch_size, self.seed, self.mega = list(lengths), batch_size, seed, mega
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.lengths), generator=g).tolist()
        size = self.batch_size * self.mega
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            yield from sorted(chunk, key=lambda i: -self.lengths[i])


class DialogueDataModule(L.LightningDataModule):
    def __init__(self, splits: dict[str, Sequence[Dialogue]], tokenizer: Any,
                 max_length: int = 512, head_tokens: int = 128, batch_size: int = 16,
                 eval_batch_size: int = 32, num_workers: int = 0, group_by_length: bool = True,
                 seed: int = 42) -> None:
        super().__init__()
        self.raw, self.tokenizer = splits, tokenizer
        self.max_length, self.head_tokens = max_length, head_tokens
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.num_workers, self.group_by_length, self.seed = num_workers, group_by_length, seed
        self.data: dict[str, EncodedSplit] = {}
        self.collate = Collator(tokenizer.pad_token_id)

    def setup(self, stage: str | None = None) -> None:
        for name, dialogues in self.raw.items():
            if name not in self.data and len(dialogues):
                self.data[name] = encode_split(dialogues, self.tokenizer, self.max_length,
                                               self.head_tokens)

    def _loader(self, ds: EncodedSplit, batch_size: int, sampler: Sampler | None) -> DataLoader:
        return DataLoader(ds, batch_size=batch_size, sampler=sampler, collate_fn=self.collate,
                          num_workers=self.num_workers,
                          persistent_workers=self.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        ds = self.data["train"]
        if self.group_by_length:
            sampler = LengthGroupedSampler([len(x) for x in ds.input_ids], self.batch_size,
                                           self.seed)
        else:
            sampler = torch.utils.data.RandomSampler(
                ds, generator=torch.Generator().manual_seed(self.seed))
        return self._loader(ds, self.batch_size, sampler)

    def eval_dataloader(self, split: str) -> DataLoader:
        ds = self.data[split]
        longest_first = sorted(range(len(ds)), key=lambda i: -len(ds.input_ids[i]))
        return self._loader(ds, self.eval_batch_size, longest_first)

    def val_dataloader(self) -> DataLoader:
        return self.eval_dataloader("validation")
