"""Serving load figures: requests/s against a real vLLM server, and the request cache's write
and read rates, the segment store against the SQLite file it replaced, side by side.

Server: vLLM's OpenAI-compatible server on the embedded LLM (CPU), started here, then the
``openai`` backend sends the same short requests at concurrency 1, 4 and 16 (no cache).
Cache: 1 and 8 writer processes put keys in batches of 16 (half of each writer's keys overlap
another's, as jobs of one sweep do), then 1 and 8 readers read every key back; and a cached
sweep through ``CachedChatModel.chat`` (key hashing included), each store on the same keys.
The SQLite store is the earlier release's (WAL mode, one connection per process).

    .venv-vllm/bin/python benchmarks/bench_serving.py [--requests 32] [--keys 2000] [--smoke]

``--smoke`` runs tiny sizes and skips the server where vLLM is not installed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import emit, parse  # noqa: E402

BATCH = 16
VALUE = {"text": "A reply of a few sentences, as a target gives. " * 8, "finish_reason": "stop",
         "prompt_tokens": 40, "completion_tokens": 60, "cached": False, "seed": None,
         "audio": None, "transcript": None}


class SQLiteStore:
    """The earlier release's request cache: one SQLite file in WAL mode."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=60, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS requests (key TEXT PRIMARY KEY, kind TEXT, "
                        "value TEXT)")
        self.db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        found: dict[str, object] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start:start + 500])
            rows = self.db.execute(f"SELECT key, value FROM requests WHERE key IN "
                                   f"({','.join('?' * len(chunk))})", chunk)
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, kind: str, items: dict[str, object]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO requests VALUES (?, ?, ?)",
                                [(k, kind, json.dumps(v)) for k, v in items.items()])

    def close(self) -> None:
        self.db.close()


def open_store(kind: str, path: Path) -> Any:
    from benevaudit.llm.cache import RequestCache

    return RequestCache(path) if kind == "files" else SQLiteStore(path)


def keys_of(worker: int, n: int) -> list[str]:
    """Half of a worker's keys are its own, half are shared with the next worker."""
    import hashlib

    own = [f"w{worker}-{i}" for i in range(n // 2)]
    shared = [f"s{(worker + 1) // 2}-{i}" for i in range(n - n // 2)]
    return [hashlib.sha256(k.encode()).hexdigest() for k in own + shared]


def _work(kind: str, path: Path, worker: int, n: int, write: bool, barrier: Any,
          out: Any) -> None:
    store = open_store(kind, path)
    keys = keys_of(worker, n)
    barrier.wait()
    start = time.perf_counter()
    for i in range(0, n, BATCH):
        chunk = keys[i:i + BATCH]
        if write:
            store.put_many("chat", {k: VALUE for k in chunk})
        else:
            assert len(store.get_many(chunk)) == len(chunk)
    out.put(time.perf_counter() - start)
    store.close()


def rate(kind: str, path: Path, workers: int, n: int, write: bool) -> float:
    """Operations per second over all workers (keys / the slowest worker's seconds)."""
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_work, args=(kind, path, w, n, write, barrier, out))
             for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, f"{kind} worker failed ({p.exitcode})"
    return workers * n / max(out.get() for _ in procs)


def cached_sweep(kind: str, path: Path, n: int) -> float:
    """Completions/s of a fully cached sweep through CachedChatModel (keys hashed per call),
    the best of three passes."""
    from benevaudit.llm import Sampling
    from benevaudit.llm.cache import CachedChatModel
    from benevaudit.llm.scripted import ScriptedChatModel

    convs = [[{"role": "system", "content": "You are a helpful assistant."},
              {"role": "user", "content": f"Question number {i}: should I apply for it?"}]
             for i in range(n)]
    model = CachedChatModel(ScriptedChatModel(), None)
    model.cache = open_store(kind, path)
    for i in range(0, n, BATCH):
        model.chat(convs[i:i + BATCH], Sampling())
    best = float("inf")
    for _ in range(3):     # best of three: the machine is shared
        start = time.perf_counter()
        for i in range(0, n, BATCH):
            assert all(c.cached for c in model.chat(convs[i:i + BATCH], Sampling()))
        best = min(best, time.perf_counter() - start)
    return n / best


def cache_figures(n: int, root: Path) -> dict[str, float]:
    print(f"request cache: {n} keys per process, batches of {BATCH}, on {root}")
    ratios = {}
    print(f"{'':28s}{'segments':>12s}{'sqlite':>12s}{'segments/sqlite':>17s}")
    for label, workers, write in (("write, 1 writer", 1, True), ("write, 8 writers", 8, True),
                                  ("read, 1 reader", 1, False), ("read, 8 readers", 8, False)):
        figures = {}
        for kind in ("files", "sqlite"):
            path = root / f"{kind}-{workers}" / ("requests" if kind == "files" else "r.sqlite")
            if not write:    # the readers read what the writers of the same count wrote
                rate(kind, path, workers, n, True)
            figures[kind] = rate(kind, path, workers, n, write)
        print(f"{label + ' (keys/s)':28s}{figures['files']:12,.0f}{figures['sqlite']:12,.0f}"
              f"{figures['files'] / figures['sqlite']:16.2f}x")
        ratios[label.replace(", ", "/").replace(" ", "_")] = figures["files"] / figures["sqlite"]
    sweep = {kind: cached_sweep(kind, root / f"sweep-{kind}" / ("requests" if kind == "files"
                                                               else "r.sqlite"), n)
             for kind in ("files", "sqlite")}
    print(f"{'cached sweep (replies/s)':28s}{sweep['files']:12,.0f}{sweep['sqlite']:12,.0f}"
          f"{sweep['files'] / sweep['sqlite']:16.2f}x")
    ratios["cached_sweep"] = sweep["files"] / sweep["sqlite"]
    return {f"segments_vs_sqlite/{k}": v for k, v in ratios.items()}


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    from benevaudit.llm.gguf import ensure_smollm2_dir

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model",
           str(ensure_smollm2_dir()), "--host", "127.0.0.1", "--port", str(port),
           "--dtype", "float32", "--max-model-len", "1024", "--enforce-eager"]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(2)
    proc.kill()
    raise SystemExit("vLLM server did not become healthy")


def server_figures(requests: int) -> dict[str, float]:
    from benevaudit.llm import Sampling, build_chat_model

    proc, url = start_server()
    try:
        convs = [[{"role": "user", "content": f"Name a fruit, then a colour. ({i})"}]
                 for i in range(requests)]
        build_chat_model("openai", model="embedded:smollm2", base_url=url).chat(
            convs[:2], Sampling(max_tokens=8))                     # warm-up
        print(f"vLLM server (CPU, embedded SmolLM2-135M): {requests} requests, 16 tokens each")
        base, out = None, {}
        for concurrency in (1, 4, 16):
            model = build_chat_model("openai", model="embedded:smollm2", base_url=url,
                                     concurrency=concurrency)
            start = time.perf_counter()
            model.chat(convs, Sampling(max_tokens=16, seed=concurrency))
            per_s = requests / (time.perf_counter() - start)
            base = base or per_s
            print(f"  concurrency {concurrency:2d}: {per_s:6.2f} requests/s "
                  f"({per_s / base:.2f}x concurrency 1)")
            out[f"server/concurrency_{concurrency}_vs_1"] = per_s / base
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=32, help="requests per concurrency")
    parser.add_argument("--keys", type=int, default=2000, help="cache keys per process")
    parser.add_argument("--dir", default=None, help="where the caches go (default: a temp dir)")
    args = parse(parser, {"keys": 64, "requests": 4})
    keys, requests = args.keys, args.requests
    root = Path(tempfile.mkdtemp(prefix="bench-serving-", dir=args.dir))
    try:
        figures = cache_figures(keys, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    try:
        import vllm  # noqa: F401
    except ImportError:
        if not args.smoke:
            raise SystemExit("the server figures need vLLM: run with .venv-vllm/bin/python")
        print("vLLM server: skipped (vLLM not installed)")
        emit(figures)
        return
    emit({**figures, **server_figures(requests)})


if __name__ == "__main__":
    main()
