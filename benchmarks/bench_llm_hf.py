"""Batched generation against one request at a time, hf backend, embedded SmolLM2-135M.

Same prompts, greedy decoding (so both modes produce the same replies and token counts;
the prompts ask for long poems, so replies run to max_tokens). Prints tokens/s for
each mode, their ratio (goal: batched >= 2x one-at-a-time) and the peak resident memory.
Also times how long a missing hub model takes to fail with HF_HUB_OFFLINE=1 (goal: well under
30 s, no network retries), side by side with a load of the embedded model.

    .venv/bin/python benchmarks/bench_llm_hf.py [--n 8] [--max-tokens 32] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from harness import emit, parse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOPICS = ["the sea", "a mountain village", "learning to cook", "an old library", "winter light",
          "a long train ride", "a garden in spring", "city rain", "a lost letter", "the desert"]


def timed_tokens(model: object, conversations: list, sampling: object) -> tuple[int, float]:
    """Generated tokens and wall seconds for one chat call."""
    start = time.perf_counter()
    replies = model.chat(conversations, sampling)
    return sum(r.completion_tokens for r in replies), time.perf_counter() - start


def time_to_fail(model: str) -> tuple[float, str]:
    """Seconds until building ``model`` on hf fails offline, and the first words of the error."""
    from benevaudit.llm import build_chat_model

    start = time.perf_counter()
    try:
        build_chat_model("hf", model=model, device="cpu")
    except (RuntimeError, ValueError) as err:
        return time.perf_counter() - start, str(err)[:60]
    return time.perf_counter() - start, "loaded (expected an error)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="number of prompts")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = parse(parser, {"n": 2, "max_tokens": 4})

    from benevaudit.llm import Sampling, build_chat_model

    fail_s, fail_msg = time_to_fail("nobody/no-such-model")
    start = time.perf_counter()
    model = build_chat_model("hf", model="embedded:smollm2", device="cpu", batch_size=args.n,
                             threads=args.threads)
    load_s = time.perf_counter() - start
    convs = [[{"role": "user", "content": f"Write a long poem about {TOPICS[i % len(TOPICS)]}."}]
             for i in range(args.n)]
    sampling = Sampling(max_tokens=args.max_tokens)
    model.chat(convs[:1], Sampling(max_tokens=2))  # warm-up

    single_tokens, single_s = 0, 0.0
    for conv in convs:
        tokens, seconds = timed_tokens(model, [conv], sampling)
        single_tokens, single_s = single_tokens + tokens, single_s + seconds
    batch_tokens, batch_s = timed_tokens(model, convs, sampling)

    single_rate, batch_rate = single_tokens / single_s, batch_tokens / batch_s
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f"prompts={args.n} max_tokens={args.max_tokens} threads={model_threads()}")
    for label, tokens, seconds in (("one at a time ", single_tokens, single_s),
                                   (f"batched (x{args.n:<3d})", batch_tokens, batch_s)):
        print(f"{label}: {tokens:5d} tokens in {seconds:7.2f} s = {tokens / seconds:7.1f} tok/s")
    print(f"speed-up      : {batch_rate / single_rate:.2f}x (goal >= 2x)")
    print(f"peak RSS      : {peak_mib:.0f} MiB")
    print(f"missing model : failed in {fail_s:.2f} s (goal < 30 s; embedded load {load_s:.2f} s): "
          f"{fail_msg}…")
    emit({"batched_speedup": batch_rate / single_rate, "peak_rss_mib": peak_mib,
          "missing_model_fail_s": fail_s})


def model_threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()
