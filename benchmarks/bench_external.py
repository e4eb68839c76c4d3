"""Scoring a gold set with the default classifier: the balanced EDOS items and every post.

The classifier is ``model=minilm`` at the embedded recipe's sequence settings (256 tokens, head
64), fresh from its package unless ``--ckpt`` names a trained model directory: scoring costs
the same whatever the weights. It scores, side by side in one run:
1. the in-distribution test split of the embedded corpus (48 scripted dialogues), per item;
2. the balanced EDOS items (``eval.limit=477``: 159 per class), with the transfer metrics
   (macro-F1 interval, three AUROCs with 1,000 bootstrap resamples, strata);
3. every EDOS post (``data.strata=true``: 20,000), the same way.
It reports seconds, items per second, the per-item ratio of EDOS posts to scripted dialogues,
and the process's peak RSS. Bars (issue 34): 477 posts under a minute, 20,000 under ten
minutes on 2 cores. Without ``--edos`` (the release's clone) it writes neutral stand-in posts
in EDOS's layout, of the same count, to time the same path.

    python benchmarks/bench_external.py --edos ../shared/data/edos-release [--ckpt <model dir>]
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import tempfile
import time
from pathlib import Path

from harness import emit, parse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
VECTORS = ("none", "2.1 descriptive attacks", "3.3 backhanded gendered compliments",
           "3.1 casual use of gendered slurs, profanities, and insults")


def stand_in(folder: Path, n: int) -> Path:
    """An EDOS-layout CSV of ``n`` neutral posts, about the length of EDOS's (~25 words)."""
    (folder / "data").mkdir(parents=True)
    with open(folder / "data" / "edos_labelled_aggregated.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(("rewire_id", "text", "label_sexist", "label_category", "label_vector",
                      "split"))
        for i in range(n):
            vector = VECTORS[i % len(VECTORS)]
            out.writerow((f"s-{i}", f"post {i}: " + "the weather today is mild and calm " * 3,
                          "not sexist" if vector == "none" else "sexist", "x", vector, "test"))
    return folder


def score(model, tokenizer, dialogues, precision: str) -> tuple[float, dict]:
    from benevaudit.audit.datamodule import DialogueDataModule
    from benevaudit.audit.evaluation import evaluate_classifier
    from benevaudit.pipelines.external import gold_metrics

    start = time.perf_counter()
    dm = DialogueDataModule({"test": dialogues}, tokenizer, 256, 64, batch_size=16,
                            eval_batch_size=32, num_workers=0, group_by_length=True, seed=42)
    dm.setup()
    result = evaluate_classifier(model, dm.eval_dataloader("test"), dialogues, "test", "cpu",
                                 precision)
    metrics = gold_metrics(result, dialogues, "test", "", 42) if dialogues[0].meta else {}
    return time.perf_counter() - start, metrics


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edos", help="a clone of rewire-online/edos (else stand-in posts)")
    parser.add_argument("--ckpt", help="a trained model directory (else the packaged MiniLM)")
    parser.add_argument("--limit", type=int, default=477)
    parser.add_argument("--all", type=int, default=20000, help="stand-in posts for part 3")
    args = parse(parser, {"limit": 30, "all": 60})

    from benevaudit.detectors import evaluation_set
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.generation.embedded import load_dialogues
    from benevaudit.generation.spec import DataBlock
    from benevaudit.gold import read_gold
    from benevaudit.precision import resolve_precision
    from benevaudit.splits import assign_splits

    precision = resolve_precision("auto", "cpu")
    source = args.ckpt or "packaged:minilm"
    model, tokenizer = load_classifier(source).eval(), load_tokenizer(source)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.edos) if args.edos else stand_in(Path(tmp) / "edos", args.all)
        block = {"kind": "edos", "path": str(root), "ob_vectors": ["1.1", "1.2", "2.1", "2.2", "2.3"],
                 "bb_vectors": ["3.3", "3.4"], "strata": True, "wrap_user_turn": None}
        every = read_gold(DataBlock.read(block))
        scripted = load_dialogues(DataBlock.read({"kind": "embedded", "size": 480, "seed": 42,
                                                  "signal": 0.8, "planted_cues": [], "path": None}),
                                  Path(tmp) / "cache")
    test = [d for d in assign_splits(scripted, 42, (0.8, 0.1, 0.1)) if d.split == "test"]
    balanced = evaluation_set([d for d in every if d.label], 1.0, args.limit, 42, by_dialogue=True)
    t_test, _ = score(model, tokenizer, test, precision)
    t_bal, m_bal = score(model, tokenizer, balanced, precision)
    t_all, _ = score(model, tokenizer, every, precision)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_dialogue, per_post = t_test / len(test), t_all / len(every)
    print(f"precision {precision}; {'EDOS release' if args.edos else 'stand-in posts'}")
    print(f"scripted test split: {len(test):6d} dialogues {t_test:7.1f} s  ({per_dialogue * 1e3:.1f} ms each)")
    print(f"EDOS balanced      : {len(balanced):6d} posts     {t_bal:7.1f} s  (bar: < 60 s)")
    print(f"EDOS every post    : {len(every):6d} posts     {t_all:7.1f} s  (bar: < 600 s), "
          f"{len(every) / t_all:.0f} posts/s")
    print(f"per item, a post / a scripted dialogue: {per_post / per_dialogue:.2f}x; "
          f"peak RSS {rss:.0f} MiB; transfer metrics keys {len(m_bal)}")
    emit({"balanced_seconds": t_bal, "all_seconds": t_all, "posts_per_second": len(every) / t_all,
          "post_vs_dialogue_ratio": per_post / per_dialogue, "peak_rss_mib": rss})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
