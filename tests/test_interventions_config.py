"""Every conf/intervention option composes with Hydra into the steps the runner expects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

from benevaudit.audit.interventions import INTERVENTIONS, code_for, steps_from_config

CONF = Path(__file__).resolve().parents[1] / "conf" / "intervention"
OPTIONS = sorted(p.stem for p in CONF.glob("*.yaml"))

EXPECTED = {
    "none": [], "punct": ["punct"], "mask": ["mask"], "shuffle": ["shuffle"],
    "random_mask": ["random_mask"], "freq_norm": ["punct", "freq_norm"],
    "sym_inject": ["punct", "sym_inject"], "punct+mask": ["punct", "mask"],
    "punct+random_mask": ["punct", "random_mask"],
    "freq_norm+shuffle": ["punct", "freq_norm", "shuffle"],
    "sym_inject+shuffle": ["punct", "sym_inject", "shuffle"],
}


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conf")
    shutil.copytree(CONF, root / "intervention")
    (root / "primary.yaml").write_text("defaults:\n  - intervention: none\n  - _self_\n")
    return root


def _compose(config_dir: Path, choice: str) -> dict:
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        cfg = compose("primary", overrides=[f"intervention={choice}"])
    return OmegaConf.to_container(cfg.intervention, resolve=True)


def test_every_study_row_has_an_option() -> None:
    assert set(EXPECTED) <= set(OPTIONS), f"missing options: {set(EXPECTED) - set(OPTIONS)}"


@pytest.mark.parametrize("option", OPTIONS)
def test_option_composes_to_ordered_steps(config_dir: Path, option: str) -> None:
    node = _compose(config_dir, option)
    steps = steps_from_config(node)
    assert node["name"] == option
    assert node["code"] == code_for(steps)
    if option in EXPECTED:
        assert [name for name, _ in steps] == EXPECTED[option]
    assert all(name in INTERVENTIONS for name, _ in steps)


@pytest.mark.parametrize("option", OPTIONS)
def test_first_line_says_what_the_file_is_for(option: str) -> None:
    first = (CONF / f"{option}.yaml").read_text().splitlines()[0]
    assert first.startswith("# ") and len(first) > 20


@pytest.mark.parametrize("option", [o for o in OPTIONS if "+" in o])
def test_compound_name_is_its_parts_joined(option: str) -> None:
    raw = OmegaConf.to_container(OmegaConf.load(CONF / f"{option}.yaml"))
    parts = [d for d in raw["defaults"] if d != "_self_"]
    assert raw["name"] == "+".join(parts) == option


def test_list_syntax_applies_in_the_order_given(config_dir: Path) -> None:
    node = _compose(config_dir, "[shuffle,punct]")
    assert [n for n, _ in steps_from_config(node)] == ["shuffle", "punct"]
    node = _compose(config_dir, "[freq_norm,shuffle]")
    assert [n for n, _ in steps_from_config(node)] == ["punct", "freq_norm", "shuffle"]
    assert code_for(steps_from_config(node)) == "P+F+SH"


def test_unknown_option_lists_valid_ones(config_dir: Path) -> None:
    with pytest.raises(MissingConfigException) as err:
        _compose(config_dir, "punctuation")
    for option in ("punct", "freq_norm+shuffle", "random_mask"):
        assert option in str(err.value)


def test_unknown_step_name_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid names: freq_norm, mask, none, punct"):
        steps_from_config({"steps": {"punct": {}, "frequency": {}}})
