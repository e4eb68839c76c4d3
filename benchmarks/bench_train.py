"""benevaudit's training loop vs a plain Hugging Face ``Trainer``, side by side in one run.

Same model (packaged MiniLM unless --model), same training dialogues, sequence length, batch
size, precision and number of optimiser steps; each side runs in its own subprocess so peak
memory is its own, and the sides alternate ``--repeats`` times so a load change on a shared
machine hits both. Prints samples/s for each, the throughput ratio of each repeat's pair as a
median with its range (bar: >= 1.0), the same for CPU time, and peak RSS (bar: within 5% of the
Trainer's). This loop runs with the ``callbacks.heap`` callback train.py adds (freed memory kept
in the heap during a CPU fit, ``audit/heap.py``); ``--no-heap`` leaves it out, to show what it
gives. ``--precision auto`` resolves as training does (bf16 only on a CPU that computes it
natively). ``--compile`` adds the same loop with ``torch.compile`` on the classifier (dropout
drawn by the eager generator, so the same masks), against eager both over the whole fit and per
step once compiled. ``--step-times`` instead times single optimiser steps of the classifier at
fp32 and at bf16 autocast, alternating, which shows what emulated bf16 costs on this CPU.

    python benchmarks/bench_train.py [--n 160] [--batch 16] [--max-length 256] [--precision auto] [--repeats 3] [--compile] [--no-heap]
    python benchmarks/bench_train.py --step-times [--steps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import emit, parse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
LIGHTNING = {"32": "32-true", "bf16": "bf16-mixed"}
ROOT = Path(__file__).resolve().parents[1]


def cpu_name() -> str:
    """The CPU's model name and whether it has native bf16, for the printed figures."""
    from benevaudit.precision import cpu_has_native_bf16

    name = platform.processor() or "cpu"
    try:
        for line in open("/proc/cpuinfo"):
            if line.lower().startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, native bf16: {cpu_has_native_bf16()}"


def dialogues(n: int, cache: str) -> list:
    from benevaudit.corpus import read_corpus
    from benevaudit.generation.embedded import ensure_scripted_sample

    return read_corpus(ensure_scripted_sample(cache, size=n, seed=7))[:n]


def ours(args: argparse.Namespace, compiled: bool = False) -> dict:
    """The framework's loop as ``train.py`` builds it (module, data module, Lightning Trainer)."""
    import lightning as L

    from benevaudit.audit.datamodule import DialogueDataModule
    from benevaudit.audit.module import DialogueClassifier
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    data = dialogues(args.n, args.cache)
    tok = load_tokenizer(args.model)
    module = DialogueClassifier(args.model, {}, model=load_classifier(args.model))
    dm = DialogueDataModule({"train": data}, tok, args.max_length, 128, batch_size=args.batch)
    dm.setup()
    if compiled:
        import torch._inductor.config as inductor

        inductor.fallback_random = True  # dropout from the eager generator: the eager masks
        module.model.compile()
    ends: list[float] = []

    class Clock(L.Callback):
        """Ends of optimiser steps, so per-step time can leave out the first (compilation)."""

        def on_train_batch_end(self, *_: object) -> None:
            ends.append(time.perf_counter())

    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, gradient_clip_val=1.0,
                        precision=LIGHTNING[args.precision], limit_val_batches=0,
                        log_every_n_steps=5, callbacks=[Clock(), *heap(args)])
    t, cpu = time.perf_counter(), time.process_time()
    trainer.fit(module, train_dataloaders=dm.train_dataloader())
    steady = (ends[-1] - ends[0]) / max(1, len(ends) - 1)
    return {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - cpu,
            "samples": len(data), "steady_step_seconds": steady,
            "loss": float(trainer.callback_metrics["train/loss"])}


def heap(args: argparse.Namespace) -> list:
    """The ``callbacks.heap`` callback train.py adds, from conf/callbacks/default.yaml; none
    with ``--no-heap``."""
    from omegaconf import OmegaConf

    from benevaudit.audit.heap import HeldHeap
    from benevaudit.audit.spec import CallbacksSpec

    block = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "callbacks" / "default.yaml"))
    spec = CallbacksSpec.model_validate(block)
    return [HeldHeap(spec.heap.trim_mib)] if spec.heap and not args.no_heap else []


def plain_trainer(args: argparse.Namespace) -> dict:
    """A plain ``transformers.Trainer`` with the study's settings on the same encoded dialogues."""
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
                              bf16=args.precision == "bf16", use_cpu=True, logging_steps=5,
                              dataloader_num_workers=0, disable_tqdm=True, seed=42)
    trainer = Trainer(model=load_classifier(args.model), args=targs, train_dataset=Rows(),
                      data_collator=DataCollatorWithPadding(tok), processing_class=tok)
    t, cpu = time.perf_counter(), time.process_time()
    trainer.train()
    return {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - cpu,
            "samples": len(rows)}


def step_times(args: argparse.Namespace) -> None:
    """Seconds per optimiser step (forward, backward, AdamW) at fp32 and bf16 autocast."""
    import torch

    from benevaudit.encoders.models import load_classifier

    model = load_classifier(args.model).train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=True)
    ids = torch.randint(1000, 20000, (args.batch, args.max_length))
    mask = torch.ones_like(ids)
    labels = torch.randint(0, 3, (args.batch,))

    def step(dtype: torch.dtype | None) -> float:
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            logits = model(input_ids=ids, attention_mask=mask).logits
        torch.nn.functional.cross_entropy(logits.float(), labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return time.perf_counter() - t

    step(None), step(torch.bfloat16)  # warm-up: allocator, kernels
    times: dict[str, list[float]] = {"fp32": [], "bf16-mixed": []}
    for _ in range(args.steps):  # alternate so a load change on a shared machine hits both
        times["fp32"].append(step(None))
        times["bf16-mixed"].append(step(torch.bfloat16))
    print(f"{cpu_name()}; torch threads {torch.get_num_threads()}")
    print(f"one optimiser step, model={args.model}, batch {args.batch} x {args.max_length} tokens "
          f"(median of {args.steps})")
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"  {k:<11}{v:>8.2f} s/step")
    print(f"  bf16-mixed / fp32 = {med['bf16-mixed'] / med['fp32']:.1f}x")
    emit({"fp32_s_per_step": med["fp32"], "bf16_s_per_step": med["bf16-mixed"]})


def child(args: argparse.Namespace) -> None:
    import torch

    torch.manual_seed(0)
    if args.side == "hf_trainer":
        result = plain_trainer(args)
    else:
        result = ours(args, compiled=args.side == "compiled")
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(result))


def run_side(args: argparse.Namespace, side: str) -> dict:
    cmd = [sys.executable, __file__, "--side", side, "--n", str(args.n), "--batch",
           str(args.batch), "--max-length", str(args.max_length), "--precision",
           args.precision, "--model", args.model, "--cache", args.cache]
    cmd += ["--no-heap"] if args.no_heap else []
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.split("RESULT ", 1)[1].splitlines()[0])


def spread(values: list[float]) -> str:
    """A ratio as its median over the repeats, with their range."""
    return f"{statistics.median(values):.2f}x [{min(values):.2f}-{max(values):.2f}]"


def compare(args: argparse.Namespace) -> dict[str, float]:
    """Alternate the sides ``--repeats`` times; each ratio is taken within one repeat."""
    dialogues(args.n, args.cache)  # write the sample once, outside the timings
    sides = ["hf_trainer", "benevaudit"] + (["compiled"] if args.compile else [])
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    loads = [os.getloadavg()[0]]
    for r in range(args.repeats):  # rotate the order so a load change hits every side
        for side in sides[r % len(sides):] + sides[:r % len(sides)]:
            runs[side].append(run_side(args, side))
        loads.append(os.getloadavg()[0])
    print(cpu_name())
    print(f"model={args.model} n={args.n} batch={args.batch} max_length={args.max_length} "
          f"precision={LIGHTNING[args.precision]} ({args.repeats} repeats, medians; load "
          f"average {min(loads):.1f}-{max(loads):.1f})")
    print(f"{'loop':<12}{'samples/s':>12}{'seconds':>10}{'CPU s':>8}{'peak RSS MiB':>15}")
    for side, rs in runs.items():
        sec = statistics.median(r["seconds"] for r in rs)
        print(f"{side:<12}{rs[0]['samples'] / sec:>12.2f}{sec:>10.1f}"
              f"{statistics.median(r['cpu_seconds'] for r in rs):>8.1f}"
              f"{min(r['peak_rss_mib'] for r in rs):>15.0f}")
    hf, ours_r = runs["hf_trainer"], runs["benevaudit"]
    ratios = [h["seconds"] / o["seconds"] for h, o in zip(hf, ours_r)]  # same samples each side
    cpu_ratios = [h["cpu_seconds"] / o["cpu_seconds"] for h, o in zip(hf, ours_r)]
    mem = min(o["peak_rss_mib"] for o in ours_r) / min(h["peak_rss_mib"] for h in hf)
    ratio = statistics.median(ratios)
    print(f"throughput benevaudit / hf_trainer = {spread(ratios)} (bar: >= 1.0) "
          f"{'PASS' if ratio >= 1.0 else 'FAIL'}")
    print(f"CPU time hf_trainer / benevaudit = {spread(cpu_ratios)} (steadier than wall time on "
          "a shared machine)")
    print(f"peak RSS benevaudit / hf_trainer = {mem:.3f} (bar: <= 1.05) "
          f"{'PASS' if mem <= 1.05 else 'FAIL'}")
    figures = {"throughput_ratio": ratio, "cpu_time_ratio": statistics.median(cpu_ratios),
               "memory_ratio": mem}
    if args.compile:
        figures.update(compiled_figures(ours_r, runs["compiled"]))
    emit(figures)
    return figures


def compiled_figures(eager: list[dict], compiled: list[dict]) -> dict[str, float]:
    """``torch.compile`` against eager: the whole fit (compilation included), and per step
    after the first (what a fit of many steps approaches)."""
    whole = [e["seconds"] / c["seconds"] for e, c in zip(eager, compiled)]
    steady = [e["steady_step_seconds"] / c["steady_step_seconds"]
              for e, c in zip(eager, compiled)]
    mem = min(c["peak_rss_mib"] for c in compiled) / min(e["peak_rss_mib"] for e in eager)
    loss = max(abs(e["loss"] - c["loss"]) for e, c in zip(eager, compiled))
    print(f"torch.compile / eager: whole fit {spread(whole)}, per step after the first "
          f"{spread(steady)}, peak RSS {mem:.3f}, last logged loss differs by {loss:.1e}")
    return {"compile_ratio": statistics.median(whole),
            "compile_steady_ratio": statistics.median(steady), "compile_memory_ratio": mem}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=160)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--precision", choices=["auto", "bf16", "32"], default="auto",
                   help="auto: bf16 where the CPU computes it natively, else 32 (as training)")
    p.add_argument("--model", default="packaged:minilm")
    p.add_argument("--cache", default="outputs/cache/bench")
    p.add_argument("--repeats", type=int, default=3,
                   help="alternate the sides this many times; ratios are medians over them")
    p.add_argument("--compile", action="store_true",
                   help="also the loop with torch.compile on the classifier, against eager")
    p.add_argument("--no-heap", action="store_true",
                   help="this loop without callbacks.heap (glibc's own memory policy), to see "
                        "what that callback gives")
    p.add_argument("--step-times", action="store_true",
                   help="time single optimiser steps at fp32 and bf16 autocast instead")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--side", choices=["benevaudit", "hf_trainer", "compiled"],
                   help=argparse.SUPPRESS)
    args = parse(p, {"n": 16, "batch": 8, "max_length": 64, "repeats": 1, "steps": 1})
    if args.precision == "auto":
        from benevaudit.precision import resolve_precision

        args.precision = "bf16" if resolve_precision("auto", "cpu").startswith("bf16") else "32"
    if args.step_times:
        return step_times(args)
    if args.side:
        return child(args)
    compare(args)


if __name__ == "__main__":
    main()
