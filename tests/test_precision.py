"""precision=auto picks bf16 only on a CPU that computes it natively; checked with the CPU's
capability faked both ways, so the test needs no special hardware."""

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from benevaudit import precision as P
from benevaudit.errors import ConfigError

CONF = Path(__file__).resolve().parents[1] / "conf"

X86_NO_BF16 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu vme sse sse2 avx avx2 fma bmi2 avx512f avx512bw
"""
X86_BF16 = X86_NO_BF16.replace("avx512bw", "avx512bw avx512_bf16 amx_tile")
ARM_BF16 = """processor\t: 0
Features\t: fp asimd evtstrm aes sve bf16 i8mm
"""


@pytest.fixture
def fake_cpu(monkeypatch, tmp_path):
    """Make this process believe it runs on a CPU described by a cpuinfo text."""
    def use(cpuinfo: str, torch_says: bool = False) -> None:
        path = tmp_path / "cpuinfo"
        path.write_text(cpuinfo)
        real = P.cpu_flags
        monkeypatch.setattr(P, "cpu_flags", lambda p=path: real(p))
        monkeypatch.setattr(P, "torch_reports_native_bf16", lambda: torch_says)
        P.cpu_has_native_bf16.cache_clear()
    yield use
    P.cpu_has_native_bf16.cache_clear()


def test_cpu_flags_are_read_from_x86_and_arm_cpuinfo(tmp_path):
    (tmp_path / "x86").write_text(X86_BF16)
    (tmp_path / "arm").write_text(ARM_BF16)
    assert {"avx2", "avx512_bf16", "amx_tile"} <= P.cpu_flags(tmp_path / "x86")
    assert "bf16" in P.cpu_flags(tmp_path / "arm") and "asimd" in P.cpu_flags(tmp_path / "arm")
    assert P.cpu_flags(tmp_path / "missing") == frozenset()


@pytest.mark.parametrize("cpuinfo,torch_says,expected", [
    (X86_NO_BF16, False, "32-true"),      # AVX2/AVX-512F alone: bf16 would be emulated
    (X86_BF16, False, "bf16-mixed"),      # the kernel reports avx512_bf16
    (ARM_BF16, False, "bf16-mixed"),      # Arm's bf16 feature
    (X86_NO_BF16, True, "bf16-mixed"),    # torch's own probe (AMX / AVX-512 BF16)
])
def test_auto_on_cpu_follows_native_bf16(fake_cpu, cpuinfo, torch_says, expected):
    fake_cpu(cpuinfo, torch_says)
    assert P.resolve_precision("auto", "cpu") == expected
    assert P.resolve_precision(None, "cpu") == expected


@pytest.mark.parametrize("isa,expected", [("AVX2", "32-true"), ("avx512_core", "32-true"),
                                          ("AVX512_CORE_BF16", "bf16-mixed"), ("", "bf16-mixed")])
def test_a_onednn_isa_cap_below_bf16_means_fp32(fake_cpu, monkeypatch, isa, expected):
    """ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN emulate bf16 even on a bf16 CPU: auto follows it."""
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", isa)
    fake_cpu(X86_BF16, torch_says=True)
    assert P.resolve_precision("auto", "cpu") == expected


def test_explicit_precision_always_wins(fake_cpu):
    fake_cpu(X86_NO_BF16)
    assert P.resolve_precision("bf16-mixed", "cpu") == "bf16-mixed"
    fake_cpu(X86_BF16)
    assert P.resolve_precision("32-true", "cpu") == "32-true"
    assert P.resolve_precision(32, "cpu") == "32"
    assert P.resolve_precision("bf16-mixed", "gpu") == "bf16-mixed"


def test_auto_on_a_gpu_keeps_the_study_fp16(fake_cpu):
    fake_cpu(X86_BF16)
    assert P.resolve_precision("auto", "gpu") == "16-mixed"
    assert P.resolve_precision("auto", "cuda") == "16-mixed"


def test_unknown_precision_names_the_valid_ones():
    with pytest.raises(ConfigError, match="trainer.precision must be one of") as e:
        P.resolve_precision("fp8", "cpu")
    assert "32-true" in str(e.value) and "auto" in str(e.value)


@pytest.mark.parametrize("value,bits", [("32-true", 32), ("32", 32), ("bf16-mixed", 16),
                                        ("bf16-true", 16), ("16-mixed", 16), ("64-true", 64)])
def test_precision_bits(value, bits):
    assert P.precision_bits(value) == bits


def test_cpu_and_default_trainers_ask_for_auto_and_the_study_keeps_fp16():
    with initialize_config_dir(str(CONF), version_base="1.3"):
        for name in ("train", "evaluate", "attribute"):
            assert compose(name, overrides=["ckpt=x"] if name != "train" else []
                           ).trainer.precision == "auto"
        assert compose("train", overrides=["trainer=ddp"]).trainer.precision == "auto"
        assert compose("train", overrides=["trainer=gpu"]).trainer.precision == "16-mixed"


def _train(tmp: Path, monkeypatch, *overrides: str) -> tuple[dict, str]:
    """A one-epoch smoke run; returns its metrics.json and the precision Lightning ran with."""
    from benevaudit.pipelines import train

    seen: list[str] = []
    real = train.build_trainer

    def spy(*args, **kwargs):
        trainer = real(*args, **kwargs)
        seen.append(type(trainer.precision_plugin).__name__ + ":" + str(trainer.precision))
        return trainer

    monkeypatch.setattr(train, "build_trainer", spy)
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=[
            "experiment=smoke", f"paths.root_dir={tmp}", f"paths.output_dir={tmp / 'run'}",
            f"paths.cache_dir={tmp.parent / 'cache'}", "trainer.max_epochs=1",
            "+trainer.limit_train_batches=3", "trainer.val_check_interval=1.0", "logger=none",
            "attribution=none", *overrides])
    train.run(cfg)
    return json.loads((tmp / "run" / "metrics.json").read_text()), seen[0]


def test_training_runs_fp32_without_native_bf16(fake_cpu, monkeypatch, tmp_path):
    fake_cpu(X86_NO_BF16)
    metrics, used = _train(tmp_path, monkeypatch)
    assert used.endswith(":32-true") and metrics["train/precision_bits"] == 32


def test_training_runs_bf16_where_the_cpu_has_it(fake_cpu, monkeypatch, tmp_path):
    fake_cpu(X86_BF16)
    metrics, used = _train(tmp_path, monkeypatch)
    assert used.endswith(":bf16-mixed") and metrics["train/precision_bits"] == 16
    assert 0.0 <= metrics["test/macro_f1"] <= 1.0
