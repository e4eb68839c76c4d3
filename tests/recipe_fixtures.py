"""A recipe's command line as Hydra runs it: ``python detect.py -m experiment=detection_paper
detector.mode=score`` composed into one config per job, so a test reads what each run reads
rather than the words of the script."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig

CONF = Path(__file__).resolve().parents[1] / "conf"

# Every experiment option and the entrypoint it pins (a new pin must be named here).
PINS = {
    "embedded": "train", "paper": "train", "smoke": "train",
    "finetune_audit_retrain_embedded": "train", "finetune_audit_retrain_paper": "train",
    "planted_cues_embedded": "train", "planted_cues_paper": "train",
    "detection_embedded": "detect", "detection_judges_embedded": "detect",
    "detection_paper": "detect", "detection_judges_paper": "detect",
    "cobia_embedded": "probe", "cobia_paper": "probe",
    "fairmt_embedded": "probe", "fairmt_paper": "probe",
    "fairdialogue_embedded": "probe", "fairdialogue_paper": "probe",
    "dataset_analysis_embedded": "analyze", "dataset_analysis_paper": "analyze",
    "generation_paper": "generate",
}
# Options of a shared group that one entrypoint alone reads; the others' specs refuse them,
# listing the kinds they take (tests/test_probe_run.py checks the refusal).
ONLY: dict[tuple[str, str], str] = {("data", "probe_run"): "detect", ("data", "inspect_log"): "detect"}


def read_by(primary: str, group: str, option: str) -> bool:
    """Whether ``primary``'s run spec takes ``group=option``."""
    return ONLY.get((group, option), primary) == primary


def jobs(words: list[str]) -> list[DictConfig]:
    """The configs of the runs a command line starts, in Hydra's job order: one without ``-m``;
    with it, the pin's ``hydra.sweeper.params`` and the command line's own sweeps crossed as the
    basic sweeper crosses them (a command-line value replaces the pin's for the same key)."""
    script = next(w for w in words if w.endswith(".py"))
    args = words[words.index(script) + 1:]
    multirun = "-m" in args or "--multirun" in args
    overrides = [a for a in args if a not in ("-m", "--multirun")]
    name = Path(script).stem
    with initialize_config_dir(str(CONF), version_base="1.3"):
        if not multirun:
            return [compose(name, overrides=overrides)]
        parser = OverridesParser.create()
        fixed = [o for o, p in zip(overrides, parser.parse_overrides(overrides))
                 if not p.is_sweep_override()]
        params = compose(name, overrides=fixed, return_hydra_config=True).hydra.sweeper.params
        swept = parser.parse_overrides([f"{k}={v}" for k, v in (params or {}).items()] + overrides)
        (batch,) = BasicSweeper.split_arguments(swept, None)
        return [compose(name, overrides=job) for job in batch]
