"""Every config option composes; unknown options fail with the valid ones listed."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import MissingConfigException

CONF = Path(__file__).resolve().parents[1] / "conf"
SKIP_GROUPS = {"hydra", "paths", "local"}


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def groups(primary: str) -> list[str]:
    """The config groups named in a primary config's defaults list."""
    import yaml

    defaults = yaml.safe_load((CONF / f"{primary}.yaml").read_text())["defaults"]
    names = [next(iter(d)).replace("optional ", "") for d in defaults if isinstance(d, dict)]
    return [g for g in names if g not in SKIP_GROUPS and (CONF / g).is_dir()]


def options_of(primary: str, group: str) -> list[str]:
    """A group's options that compose under ``primary``: an experiment pins one entrypoint."""
    from recipe_fixtures import PINS, read_by

    return [o for o in options(group) if (group != "experiment" or PINS.get(o) == primary)
            and read_by(primary, group, o)]


PRIMARIES = ("train", "evaluate", "attribute")
CASES = [(p, g, o) for p in PRIMARIES for g in groups(p) for o in options_of(p, g)]


@pytest.mark.parametrize("primary,group,option", CASES, ids=[f"{p}:{g}={o}" for p, g, o in CASES])
def test_every_option_composes(primary, group, option):
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(primary, overrides=[f"{group}={option}", "paths.root_dir=/tmp/x"])
    assert cfg.task_name == primary
    assert cfg.model.source and cfg.data.kind in {"embedded", "corpus", "edos", "diasafety", "labelled"}


def test_every_yaml_says_what_it_is_for():
    for path in CONF.rglob("*.yaml"):
        first = path.read_text().lstrip().splitlines()[0]
        if first.startswith("# @package"):
            first = path.read_text().lstrip().splitlines()[1]
        assert first.startswith("#"), f"{path} should open with a comment saying what it is for"


def test_unknown_option_lists_valid_ones():
    with initialize_config_dir(str(CONF), version_base="1.3"):
        with pytest.raises(MissingConfigException) as e:
            compose("train", overrides=["model=gpt9"])
    msg = str(e.value)
    for option in ("minilm", "bert_base_uncased", "tiny_bert"):
        assert option in msg


def test_defaults_follow_the_study():
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=["experiment=paper", "data.path=/d"])
    assert cfg.model.source == "bert-base-uncased" and cfg.model.max_length == 512
    assert cfg.optim.lr == 2e-5 and cfg.optim.weight_decay == 0.01 and cfg.optim.warmup_ratio == 0.06
    assert cfg.loader.batch_size * cfg.trainer.accumulate_grad_batches == 128
    assert cfg.trainer.gradient_clip_val == 1.0 and cfg.trainer.max_epochs == 5
    assert cfg.trainer.val_check_interval == 0.25 and cfg.trainer.precision == "16-mixed"
    assert cfg.callbacks.early_stopping.patience == 3 and cfg.seed == 42
    assert cfg.callbacks.checkpoint.monitor == "val/macro_f1" and cfg.callbacks.checkpoint.save_last


def test_missing_hub_model_fails_fast_with_a_hint():
    from benevaudit.encoders.models import load_classifier, load_tokenizer
    from benevaudit.errors import ConfigError

    for load in (load_tokenizer, load_classifier):
        with pytest.raises(ConfigError, match="model.source=/path/to/no-such-model"):
            load("benevaudit-test/no-such-model")


FAMILIES = [("detect", "detector"), ("generate", "generator"), ("probe", "probe")]
FAMILY_CASES = [(p, g, o) for p, g in FAMILIES for o in options(g)]


@pytest.mark.parametrize("primary,group,option", FAMILY_CASES,
                         ids=[f"{g}={o}" for _, g, o in FAMILY_CASES])
def test_every_option_fills_what_its_base_leaves_open(primary, group, option):
    """An option composed from a base file (``base/*.yaml``) sets every key the base marks
    ``???``, and a detector or generator is named after its file."""
    from omegaconf import OmegaConf

    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(primary, overrides=[f"{group}={option}", "paths.root_dir=/tmp/x"])
    assert not OmegaConf.missing_keys(cfg[group]), f"{group}={option} leaves keys unset"
    if group != "probe":
        assert cfg[group].name == option
