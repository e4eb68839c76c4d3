"""benevaudit's training loop vs a plain Hugging Face ``Trainer``, side by side in one run.

Same model (packaged MiniLM unless --model), same training dialogues, sequence length, batch
size, precision and number of optimiser steps; each side runs in its own subprocess so peak
memory is its own. Prints samples/s for each, the ratio (bar: >= 1.0) and peak RSS.

    python benchmarks/bench_train.py [--n 96] [--batch 16] [--max-length 256] [--precision bf16] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def dialogues(n: int, cache: str):
    from benevaudit.corpus import read_corpus
    from benevaudit.generation.embedded import ensure_scripted_sample

    return read_corpus(ensure_scripted_sample(cache, size=n, seed=7))[:n]


def ours(args: argparse.Namespace) -> dict:
    import lightning as L

    from benevaudit.audit.datamodule import DialogueDataModule
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.audit.module import DialogueClassifier

    data = dialogues(args.n, args.cache)
    tok = load_tokenizer(args.model)
    model = load_classifier(args.model)
    module = DialogueClassifier(args.model, {}, model=model)
    dm = DialogueDataModule({"train": data}, tok, args.max_length, 128, batch_size=args.batch)
    dm.setup()
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, gradient_clip_val=1.0,
                        precision="bf16-mixed" if args.precision == "bf16" else "32-true",
                        limit_val_batches=0)
    t = time.perf_counter()
    trainer.fit(module, train_dataloaders=dm.train_dataloader())
    return {"seconds": time.perf_counter() - t, "samples": len(data)}


def plain_trainer(args: argparse.Namespace) -> dict:
    import torch
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from benevaudit.encoders.encoding import encode_texts
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.schema import CLASS_INDEX
    from benevaudit.text import render_turns

    data = dialogues(args.n, args.cache)
    tok = load_tokenizer(args.model)
    enc = encode_texts(tok, [render_turns(d.turns) for d in data], args.max_length, 128)
    rows = [{"input_ids": ids, "labels": CLASS_INDEX[d.label]} for ids, d in zip(enc.input_ids, data)]

    class Rows(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(rows)

        def __getitem__(self, i: int) -> dict:
            return rows[i]

    targs = TrainingArguments(output_dir=os.path.join(args.cache, "hf_trainer"), report_to=[],
                              per_device_train_batch_size=args.batch, num_train_epochs=1,
                              learning_rate=2e-5, weight_decay=0.01,
                              warmup_steps=max(1, round(0.06 * -(-len(rows) // args.batch))),
                              lr_scheduler_type="cosine", max_grad_norm=1.0, save_strategy="no",
                              bf16=args.precision == "bf16", use_cpu=True, logging_steps=1000,
                              dataloader_num_workers=0, disable_tqdm=True, seed=42)
    trainer = Trainer(model=load_classifier(args.model), args=targs, train_dataset=Rows(),
                      data_collator=DataCollatorWithPadding(tok), processing_class=tok)
    t = time.perf_counter()
    trainer.train()
    return {"seconds": time.perf_counter() - t, "samples": len(rows)}


def child(args: argparse.Namespace) -> None:
    import torch

    torch.manual_seed(0)
    result = (ours if args.side == "benevaudit" else plain_trainer)(args)
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(result))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=96)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--precision", choices=["bf16", "32"], default="bf16")
    p.add_argument("--model", default="packaged:minilm")
    p.add_argument("--cache", default="outputs/cache/bench")
    p.add_argument("--repeats", type=int, default=2,
                   help="alternate the two sides this many times; the best run of each counts")
    p.add_argument("--side", choices=["benevaudit", "hf_trainer"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.side:
        return child(args)
    dialogues(args.n, args.cache)  # write the sample once, outside the timings
    results: dict[str, dict] = {}
    sides = ["hf_trainer", "benevaudit"]
    for r in range(args.repeats):  # alternate so a load change on a shared machine hits both
        for side in sides if r % 2 == 0 else sides[::-1]:
            cmd = [sys.executable, __file__, "--side", side, "--n", str(args.n), "--batch",
                   str(args.batch), "--max-length", str(args.max_length), "--precision",
                   args.precision, "--model", args.model, "--cache", args.cache]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
            if side not in results or res["seconds"] < results[side]["seconds"]:
                results[side] = res
    print(f"model={args.model} n={args.n} batch={args.batch} max_length={args.max_length} "
          f"precision={args.precision}")
    print(f"{'loop':<12}{'samples/s':>12}{'seconds':>10}{'peak RSS MiB':>15}")
    for side, r in results.items():
        print(f"{side:<12}{r['samples'] / r['seconds']:>12.2f}{r['seconds']:>10.1f}"
              f"{r['peak_rss_mib']:>15.0f}")
    ratio = (results["benevaudit"]["samples"] / results["benevaudit"]["seconds"]) / (
        results["hf_trainer"]["samples"] / results["hf_trainer"]["seconds"])
    print(f"ratio benevaudit / hf_trainer = {ratio:.2f}x (bar: >= 1.0)")


if __name__ == "__main__":
    main()
