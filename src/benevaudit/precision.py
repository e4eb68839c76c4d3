"""The classifier's numeric precision, chosen for the machine it runs on.

``precision: auto`` (the CPU default) means bf16 autocast only where the CPU computes bf16 in
hardware (``avx512_bf16`` or AMX on x86, the ``bf16`` feature on Arm); elsewhere bf16 is emulated
and a MiniLM training step runs ~14x slower than in fp32, so ``auto`` falls back to ``32-true``.
On a GPU ``auto`` keeps the study's fp16 mixed precision (``16-mixed``). An explicit setting
(``trainer.precision=bf16-mixed``) is always used as given.

Every path that runs the classifier (training, the test pass, ``evaluate.py``, ``attribute.py``,
the attribution passes and the benchmarks) resolves through :func:`resolve_precision`, so one
machine gets one answer. Core module: torch is imported only inside the functions that need it.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path

from benevaudit.errors import ConfigError

log = logging.getLogger(__name__)

AUTO = "auto"
# Lightning's precision names, and the short aliases it also takes
VALID = ("auto", "32-true", "32", "64-true", "64", "bf16-mixed", "bf16-true", "bf16",
         "16-mixed", "16-true", "16")
# /proc/cpuinfo flags of CPUs that compute bf16 natively (x86 AVX-512 BF16, x86 AMX, Arm BF16)
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
_logged: set[tuple[str, str, str]] = set()


def cpu_flags(path: str | Path = "/proc/cpuinfo") -> frozenset[str]:
    """The feature flags the kernel reports for the first CPU (empty where there is no cpuinfo)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):  # x86 | Arm
            return frozenset(value.split())
    return frozenset()


def torch_reports_native_bf16() -> bool:
    """What torch's own CPU probe says (AVX-512 BF16 or AMX tiles); False where it cannot tell."""
    import torch  # torch is heavy and loads on first use

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


# oneDNN ISA caps (``ONEDNN_MAX_CPU_ISA``) below AVX-512 BF16: oneDNN then emulates bf16 even on
# a CPU that has it, which is also how to try this machine's fp32 fallback on a bf16 CPU
ISA_WITHOUT_BF16 = frozenset({"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE",
                              "AVX512_CORE_VNNI"})


def isa_capped_below_bf16() -> bool:
    """True when ``ONEDNN_MAX_CPU_ISA`` names an instruction set without native bf16."""
    return os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper() in ISA_WITHOUT_BF16


@lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """True where bf16 matrix arithmetic runs in hardware on this CPU (checked once a process)."""
    if isa_capped_below_bf16():
        return False
    return torch_reports_native_bf16() or bool(cpu_flags() & NATIVE_BF16_FLAGS)


def accelerator_kind(accelerator: str) -> str:
    """``cpu`` or ``gpu`` for a Lightning accelerator name (``auto`` means a GPU when one exists)."""
    name = str(accelerator).lower()
    if name in ("gpu", "cuda", "mps"):
        return "gpu"
    if name == "auto":
        import torch  # torch is heavy and loads on first use

        return "gpu" if torch.cuda.is_available() else "cpu"
    return "cpu"


def torch_device(accelerator: str) -> str:
    """The torch device a single-device pass runs on for a Lightning accelerator name."""
    import torch  # torch is heavy and loads on first use

    if accelerator_kind(accelerator) == "cpu":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    if str(accelerator).lower() == "mps" and torch.backends.mps.is_available():
        return "mps"
    if str(accelerator).lower() == "auto":
        return "cpu"
    raise ConfigError(f"trainer.accelerator={accelerator}, but torch sees no GPU on this machine; "
                      "use trainer=cpu")


def resolve_precision(requested: str | int | None, accelerator: str = "cpu") -> str:
    """The Lightning precision to run with: ``requested`` unless it is ``auto`` (or unset)."""
    value = AUTO if requested is None else str(requested)
    if value not in VALID:
        raise ConfigError(f"trainer.precision must be one of {list(VALID)}, got {value!r}")
    kind = accelerator_kind(accelerator)
    if value != AUTO:
        resolved, why = value, "as configured"
    elif kind == "gpu":
        resolved, why = "16-mixed", "auto on a GPU: the study's fp16 mixed precision"
    elif cpu_has_native_bf16():
        resolved, why = "bf16-mixed", "auto: this CPU computes bf16 natively"
    else:
        resolved, why = "32-true", "auto: this CPU has no native bf16 (emulated bf16 is ~14x slower)"
    key = (value, kind, resolved)
    if key not in _logged:  # once a process, not once per pass
        _logged.add(key)
        log.info("precision %s on %s (%s)", resolved, kind, why)
    return resolved


def precision_bits(precision: str | int) -> int:
    """Bits of the arithmetic a resolved precision computes in: 16 for bf16/fp16, else 32 or 64."""
    value = str(precision)
    if value.startswith(("bf16", "16")):
        return 16
    if value.startswith("64"):
        return 64
    return 32
