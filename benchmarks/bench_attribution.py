"""Attribution speed and memory: batched attention rollout against Captum layer integrated
gradients and against the same rollout run one dialogue at a time.

Same model (the packaged MiniLM by default, eager attention) and the same scripted dialogues for
every method, at the precision training resolves (``--precision auto``: bf16 autocast only on a
CPU that computes it natively, fp16 autocast on a GPU, fp32 elsewhere). Bars: batched rollout ≥ 25× faster per dialogue than IG with n_steps=50, and ≥ 3×
faster than unbatched rollout. IG is timed on a subset (``--ig-dialogues``) because it costs
n_steps forward and backward passes per dialogue; per-dialogue time is what is compared.
Each method runs in a fresh process; peak memory is the CUDA peak on a GPU and, on CPU, the
growth of the process's peak RSS over a one-dialogue warm-up.

    python benchmarks/bench_attribution.py [--dialogues 64] [--max-length 256] [--device cpu]
                                           [--batch-size 16] [--max-batch-tokens auto]
                                           [--precision auto]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from harness import emit, parse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_model(source: str, tokenizer: str | None) -> tuple[object, object]:
    """(tokenizer, eager-attention classifier). ``random:bert-base`` is a randomly initialised
    model of bert-base-uncased's shape (12 layers, 768 wide): the cost of the study's model
    without its weights, for machines that cannot reach the hub."""
    from benevaudit.encoders.models import load_classifier, load_tokenizer

    if source != "random:bert-base":
        return load_tokenizer(tokenizer or source), load_classifier(source, attn_implementation="eager")
    from transformers import AutoModelForSequenceClassification, BertConfig

    from benevaudit.schema import CLASSES

    config = BertConfig(num_labels=len(CLASSES), id2label=dict(enumerate(CLASSES)),
                        label2id={c: i for i, c in enumerate(CLASSES)})
    config._attn_implementation = "eager"
    return (load_tokenizer(tokenizer or "packaged:minilm"),
            AutoModelForSequenceClassification.from_config(config))


def run_one(method: str, args: argparse.Namespace) -> dict[str, float]:
    """Time one method in this process; memory is the growth of the peak RSS (CPU) or the
    CUDA peak, over a one-dialogue warm-up."""
    import torch

    from benevaudit.audit.attribution.words import attribute_dialogues
    from benevaudit.audit.evaluation import autocast_dtype
    from benevaudit.corpus import read_corpus
    from benevaudit.generation.embedded import ensure_scripted_sample

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        dialogues = read_corpus(ensure_scripted_sample(tmp, args.dialogues, seed=1))
    dialogues = dialogues[: args.dialogues]
    tok, model = load_model(args.model, args.tokenizer)
    model = model.float().to(args.device)
    name, batch_size = {"batched": ("rollout", args.batch_size), "single": ("rollout", 1),
                        "ig": ("integrated_gradients", args.batch_size)}[method]
    if method == "ig":
        dialogues = dialogues[: args.ig_dialogues]
    device = torch.device(args.device)
    dtype = autocast_dtype(args.precision, device.type)

    def run(ds: list, bs: int) -> None:
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            attribute_dialogues(model, tok, ds, name, batch_size=bs, max_length=args.max_length,
                                progress=False, n_steps=args.n_steps,
                                max_batch_tokens=args.max_batch_tokens)

    run(dialogues[:1], 1)  # warm-up: allocator, kernels, tokenizer
    cuda = args.device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    run(dialogues, batch_size)
    if cuda:
        torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    mem = (torch.cuda.max_memory_allocated() if cuda else
           (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024) / 2**20
    return {"n": len(dialogues), "seconds": secs, "peak_mib": mem}


def main(argv: list[str] | None = None) -> dict[str, float]:
    import torch

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="packaged:minilm",
                   help="packaged:minilm, a local model directory, or random:bert-base")
    p.add_argument("--tokenizer", help="tokenizer source when it differs from --model "
                   "(random:bert-base uses the packaged WordPiece vocabulary by default)")
    p.add_argument("--dialogues", type=int, default=64)
    p.add_argument("--ig-dialogues", type=int, default=8)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--n-steps", type=int, default=50)
    p.add_argument("--max-batch-tokens", type=lambda v: v if v == "auto" else int(v),
                   default="auto", help="padded tokens per batch: auto (1024 on CPU, no cap "
                   "on GPU), 0 = no cap")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--precision", default="auto",
                   help="auto (as training resolves it), 32-true, bf16-mixed or 16-mixed")
    p.add_argument("--only", choices=["batched", "single", "ig"], help=argparse.SUPPRESS)
    args = parse(p, {"dialogues": 4, "ig_dialogues": 1, "max_length": 64, "batch_size": 4,
                     "n_steps": 4}, argv)
    from benevaudit.precision import resolve_precision

    args.precision = resolve_precision(args.precision, "cpu" if args.device == "cpu" else "gpu")
    if args.only:  # child process: one method, result as JSON on the last line
        print(json.dumps(run_one(args.only, args)))
        return {}
    rows = {}
    for method in ("batched", "single", "ig"):
        # a fresh process per method, so each peak-memory figure is its own
        child = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", method],
                               check=True, capture_output=True, text=True)
        rows[method] = json.loads(child.stdout.strip().splitlines()[-1])
    labels = {"batched": "rollout, batched", "single": "rollout, one at a time",
              "ig": f"IG, n_steps={args.n_steps}"}
    print(f"model {args.model}, device {args.device}, precision {args.precision}, "
          f"torch threads {torch.get_num_threads()}, "
          f"max_length {args.max_length}, batch {args.batch_size}, "
          f"max_batch_tokens {args.max_batch_tokens}")
    print(f"{'method':<26}{'dialogues':>10}{'total s':>10}{'ms/dialogue':>13}{'peak MiB':>10}")
    for method, r in rows.items():
        print(f"{labels[method]:<26}{r['n']:>10}{r['seconds']:>10.2f}"
              f"{1000 * r['seconds'] / r['n']:>13.1f}{r['peak_mib']:>10.0f}")
    per = {m: r["seconds"] / r["n"] for m, r in rows.items()}
    vs_ig, vs_single = per["ig"] / per["batched"], per["single"] / per["batched"]
    print(f"speed-up vs IG: {vs_ig:.1f}x (bar 25x) {'PASS' if vs_ig >= 25 else 'FAIL'}")
    print(f"speed-up vs one at a time: {vs_single:.1f}x (bar 3x) "
          f"{'PASS' if vs_single >= 3 else 'FAIL'}")
    emit({"speedup_vs_ig": vs_ig, "speedup_vs_single": vs_single})
    return {"speedup_vs_ig": vs_ig, "speedup_vs_single": vs_single}


if __name__ == "__main__":
    main()
