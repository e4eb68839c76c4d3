"""Detection cost on the embedded LLM, measured side by side in one run.

1. Context units share their prefix: a guard reading each agent turn with its whole prior
   context, on dialogues of 14 turns (the embedded scripted corpus, or any corpus with
   --corpus), with the hf backend's KV-cache reuse on and off (alternating runs, best wall time
   of each). Reports prompt tokens actually run vs the naive count, the wall-time ratio, and
   the largest score difference (label-scored guards) or the verdicts that agree (guards that
   write one). Bars: a label-scored guard >= 4x fewer prompt tokens and >= 2x faster; a guard
   that writes its verdict, within 1% of the floor below and >= 1.5x faster. It also prints the
   floor for any exact reuse: the number of distinct prefixes of all prompts (their token
   trie), which no cache can go below, since a guard's text after the conversation attends to a
   different context in every unit.
2. The judge's fast mode (three label continuations scored in one pass) vs the study's mode
   (a sampled reply, temperature 0.6, top-p 0.9, up to --gen-max-tokens, parsed): seconds per
   dialogue and how often the two modes give the same label.

    python benchmarks/bench_detect.py [--dialogues 4] [--guards llama_guard3 granite_guardian]
    python benchmarks/bench_detect.py --corpus outputs/corpus --skip-judge   # your own dialogues
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

from harness import emit, parse

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def machine() -> str:
    """CPU model and the vector extensions that matter for float32/bfloat16 matmuls."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines()
                  if ln.startswith("Model name")), "unknown CPU")
    flags = next((ln.split(":", 1)[1].split() for ln in out.splitlines()
                  if ln.startswith("Flags")), [])
    have = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return f"{model}, {os.cpu_count()} CPUs, flags: {' '.join(have) or 'none of avx2/avx512'}"


def dialogues(n: int, turns: int, corpus: str | None) -> list:
    """The ``data`` block as the pipelines read it: conf/data's own file, checked by its spec,
    so a key the loader comes to need is never missing here."""
    from omegaconf import OmegaConf

    from benevaudit.generation.embedded import load_dialogues
    from benevaudit.generation.spec import DataBlock

    block = OmegaConf.to_container(OmegaConf.load(
        ROOT / "conf" / "data" / ("corpus.yaml" if corpus else "embedded.yaml")))
    block.update({"path": corpus} if corpus else {"size": 480, "seed": 42, "signal": 0.8})
    data = DataBlock.read(block)
    found = load_dialogues(data, os.environ.get("BENEVAUDIT_CACHE", "outputs/cache"))
    picked = [d for d in found if len(d.turns) == turns][:n]
    if len(picked) < n:
        raise SystemExit(f"only {len(picked)} dialogues of {corpus or 'the scripted corpus'} "
                         f"have {turns} turns")
    return picked


def guard_option(kind: str) -> str:
    """The ``conf/detector/`` option of guard ``kind``."""
    from omegaconf import OmegaConf

    options = sorted((ROOT / "conf" / "detector").glob("*.yaml"))
    return next(p.stem for p in options if OmegaConf.load(p).get("kind") == kind)


def detector_spec(option: str, **changes: object) -> object:
    """``detector=option`` as detect.py composes it (seed 0), with ``changes`` to its keys,
    validated into its spec: the values a run would read."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from pydantic import TypeAdapter

    from benevaudit.detectors.spec import DetectorSpec

    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("detect", overrides=[f"detector={option}", "seed=0"])
    block = OmegaConf.to_container(cfg.detector, resolve=True)
    return TypeAdapter(DetectorSpec).validate_python({**block, **changes})


def bench_prefix(kind: str, ds: list, threads: int, repeats: int) -> dict[str, float]:
    """Reuse on vs off, alternating, best wall time of each. A guard that writes its verdict on
    a model whose caches cannot be padded into one batch also gets a third arm, reuse forced on,
    beside the backend's own choice between one-at-a-time reuse and padded batches (see
    ``HFChatModel._reuse_pays``); where they can, the backend reuses whenever a prefix repeats,
    so that arm would run the same path twice."""
    from benevaudit.detectors import make_units
    from benevaudit.detectors.guards import GuardDetector
    from benevaudit.llm.hf import HFChatModel
    from benevaudit.llm.prefix_floor import distinct_prefix_tokens
    from benevaudit.llm.prompting import prompt_ids

    arms = {"reuse": HFChatModel(threads=threads),
            "naive": HFChatModel(threads=threads, prefix_reuse=False)}
    spec = detector_spec(guard_option(kind), unit="context", categories=False)
    if spec.mode == "generate" and not arms["reuse"].pads_caches:
        arms["forced"] = HFChatModel(threads=threads)
        arms["forced"].decode_step_tokens = 0
    best = {name: float("inf") for name in arms}
    scores: dict[str, list[float]] = {}
    flags: dict[str, list[bool | None]] = {}
    for _ in range(repeats):
        for name, model in arms.items():
            model._prefix, model._reply_tokens = None, None
            model.prefill_tokens = model.prompt_tokens = 0
            det = GuardDetector(spec, model)
            start = time.perf_counter()
            results = det.detect(ds)
            best[name] = min(best[name], time.perf_counter() - start)
            scores[name] = [s for r in results for s in r.unit_scores]
            flags[name] = [f for r in results for f in r.unit_flags]  # None: invalid
    naive = arms["naive"].prefill_tokens
    prompts = [prompt_ids(arms["reuse"].tokenizer, det.prompt(u))
               for d in ds for u in make_units(d, "context")]
    floor = distinct_prefix_tokens(prompts)
    units = len(scores["reuse"])
    figures = {f"{kind}/floor_fewer": naive / floor}
    print(f"{kind:17s} {len(ds)} dialogues, {units} context units ({det.mode}); naive "
          f"{naive:,} prompt tokens, {best['naive']:.1f} s; floor of any exact reuse "
          f"{floor:,} ({naive / floor:.2f}x fewer)")
    for name in [n for n in arms if n != "naive"]:
        run = arms[name].prefill_tokens
        if det.mode == "score":
            same = (f"max |score diff| "
                    f"{max(abs(a - b) for a, b in zip(scores[name], scores['naive'])):.1e}")
        else:
            same = (f"same verdict (or both invalid) on "
                    f"{sum(a == b for a, b in zip(flags[name], flags['naive']))}/{units} units")
        fewer, faster = naive / run, best["naive"] / best[name]
        figures |= {f"{kind}/{name}/fewer": fewer, f"{kind}/{name}/faster": faster}
        if det.mode == "score":
            bars = (f"prefill >= 4x fewer {'PASS' if fewer >= 4 else 'FAIL'}, wall >= 2x "
                    f"faster {'PASS' if faster >= 2 else 'FAIL'}")
        else:  # a written verdict decodes as many steps either way: the prefill is what reuse saves
            bars = (f"prefill within 1% of the floor {'PASS' if run <= 1.01 * floor else 'FAIL'}"
                    f", wall >= 1.5x faster {'PASS' if faster >= 1.5 else 'FAIL'}")
        print(f"  {name:6s}: {run:,} prompt tokens run ({fewer:.2f}x fewer), {best[name]:.1f} s "
              f"({faster:.2f}x faster); {same}; bars: {bars}")
    return figures


def bench_judge(ds: list, threads: int, max_tokens: int) -> dict[str, float]:
    from benevaudit.detectors.judges import JudgeDetector
    from benevaudit.llm.hf import HFChatModel

    model = HFChatModel(threads=threads, batch_size=len(ds))
    factory = [("smollm2", lambda: model)]
    model.close = lambda: None  # keep it loaded for both modes
    fast = JudgeDetector(detector_spec("judge_operational", mode="score"), factory)
    sampling = {"temperature": 0.6, "top_p": 0.9, "max_tokens": max_tokens, "seed": 0}
    slow = JudgeDetector(detector_spec("judge_operational", mode="generate",
                                       sampling=sampling), factory)
    start = time.perf_counter()
    a = fast.detect(ds)
    t_fast = (time.perf_counter() - start) / len(ds)
    start = time.perf_counter()
    b = slow.detect(ds)
    t_slow = (time.perf_counter() - start) / len(ds)
    both = [(x.pred, y.pred) for x, y in zip(a, b) if y.pred is not None]
    agree = sum(x == y for x, y in both)
    tokens = [len(model.tokenizer(y.invalid_raw[0] if y.invalid_raw else y.extra.get("raw") or "")
                  ["input_ids"]) for y in b]
    print(f"judge_operational  score {t_fast:.2f} s/dialogue vs generate {t_slow:.2f} s/dialogue "
          f"(max {max_tokens} tokens; replies of {min(tokens)}-{max(tokens)} tokens): "
          f"{t_slow / t_fast:.1f}x cheaper; same label on {agree}/{len(both)} dialogues the "
          f"reply labelled ({len(ds) - len(both)}/{len(ds)} replies invalid); labels score "
          f"{[x.pred for x in a]} generate {[y.pred for y in b]}")
    print(f"  bar: score mode >= 10x cheaper per dialogue {'PASS' if t_slow >= 10 * t_fast else 'FAIL'}")
    return {"judge/generate_over_score": t_slow / t_fast, "judge/same_label": agree}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=4)
    parser.add_argument("--turns", type=int, default=14)
    parser.add_argument("--corpus", default=None,
                        help="a corpus directory or file (generate.py's out_dir); default: the "
                             "embedded scripted corpus")
    parser.add_argument("--guards", nargs="*", default=["llama_guard3", "granite_guardian",
                                                        "qwen3guard"])
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (1 is fastest on a loaded, shared CPU)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gen-max-tokens", type=int, default=2000)
    parser.add_argument("--skip-judge", action="store_true")
    args = parse(parser, {"dialogues": 1, "repeats": 1, "gen_max_tokens": 8,
                          "turns": 10})
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    ds = dialogues(args.dialogues, args.turns, args.corpus)
    figures: dict[str, float] = {}
    for kind in args.guards:
        figures |= bench_prefix(kind, ds, args.threads, args.repeats)
    if not args.skip_judge:
        figures |= bench_judge(ds, args.threads, args.gen_max_tokens)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    emit(figures | {"peak_rss_mib": peak})


if __name__ == "__main__":
    main()
