"""Freed memory kept in the process heap while a CPU fit runs.

A training step on the CPU allocates and frees the same large tensors every step (attention
scores, dropout masks, their gradients: 50 MB each for a batch of 16 × 256 tokens and 12 heads
at fp32). glibc's malloc serves a request that large with a fresh ``mmap`` and returns it to the
system on ``free``, so every step faults its working set in again, page by page: on 2 CPU cores
a fifth to a quarter of a MiniLM fit's CPU time went to the kernel's page faults
(``bench_train.py``). During a fit, ``HeldHeap`` keeps up to ``trim_mib`` of freed memory at the
heap's top (``M_TRIM_THRESHOLD``) and serves each forward pass from the heap alone
(``M_MMAP_MAX`` 0), so the next step reuses the pages the last one freed. Backward reuses the
chunks forward freed and maps afresh only a request that fits none, which is unmapped again when
freed: served from the heap alone, such requests grew the heap above holes no later request
fitted (peak RSS +5-7%; +1.5-2.5% this way). What is computed does not change, only where its
memory comes from. At the end of the fit the C library's defaults come back and the kept memory
is returned.

Only where the C library is glibc and the fit runs on the CPU; elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import platform
from typing import Any

import lightning as L

log = logging.getLogger(__name__)

# mallopt parameters (glibc's malloc.h) and the defaults the fit puts back
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
DEFAULT_TRIM_THRESHOLD, DEFAULT_MMAP_MAX = 128 * 1024, 65536


@functools.cache
def glibc() -> Any | None:
    """The process's C library when it is glibc (the one ``mallopt`` here speaks to), looked
    up once: a fit switches the policy twice a step."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def hold(trim_mib: int) -> bool:
    """Keep up to ``trim_mib`` of freed memory at the heap's top and serve every allocation from
    the heap; False where the C library is not glibc or refuses."""
    libc = glibc()
    if libc is None:
        return False
    trim = ctypes.c_int(min(trim_mib * 2**20, 2**31 - 1))  # mallopt takes an int
    return bool(libc.mallopt(M_TRIM_THRESHOLD, trim)) and heap_only(True)


def heap_only(on: bool) -> bool:
    """Serve every allocation from the heap (``on``), or let glibc map large ones afresh when
    no freed chunk fits them (its default)."""
    libc = glibc()
    return libc is not None and bool(libc.mallopt(M_MMAP_MAX, 0 if on else DEFAULT_MMAP_MAX))


def release() -> None:
    """glibc's default thresholds again, and the heap's free pages back to the system."""
    libc = glibc()
    if libc is None:
        return
    heap_only(False)
    libc.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
    libc.malloc_trim(ctypes.c_size_t(0))


class HeldHeap(L.Callback):
    """``hold`` for the length of a fit on the CPU (``callbacks.heap``); every allocation from
    the heap while a batch runs forward, glibc's own choice (a freed chunk that fits, else a
    fresh mapping) in backward."""

    def __init__(self, trim_mib: int) -> None:
        self.trim_mib, self.held = trim_mib, False

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage == "fit" and trainer.strategy.root_device.type == "cpu":
            self.held = hold(self.trim_mib)
            if not self.held:
                log.debug("callbacks.heap: the C library is not glibc; its own policy stays")

    def on_train_batch_start(self, *_: Any) -> None:
        if self.held:
            heap_only(True)

    def on_before_backward(self, *_: Any) -> None:
        if self.held:
            heap_only(False)

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if self.held:
            release()
            self.held = False

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """A fit that fails or is interrupted gives the policy back too."""
        self.teardown(trainer, pl_module, "fit")
