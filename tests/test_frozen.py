"""evaluate.py and attribute.py read the training run they reuse through its specs: its data,
split, seed and sequence settings, and nothing else of its config."""

from pathlib import Path

import pytest
import yaml

from benevaudit.errors import InputError
from benevaudit.pipelines.frozen import TrainedOn
from config_fixtures import option


def saved_config(run: Path, **changes) -> Path:
    config = {"seed": 7, "data": {**option("data", "embedded"), "size": 90},
              "split": {"strategy": "dialogue", "ratios": [0.6, 0.2, 0.2], "generator": None},
              "model": {"source": "tiny", "max_length": 96, "head_tokens": 16},
              "optim": {"a_key_of_another_version": 1}, **changes}
    path = run / ".hydra" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_train_run_is_read_through_the_specs_it_was_checked_by(tmp_path):
    trained = TrainedOn.read(saved_config(tmp_path))
    assert (trained.seed, trained.data.kind, trained.split.strategy) == (7, "embedded", "dialogue")
    assert (trained.model.max_length, trained.model.head_tokens) == (96, 16)


def test_a_spoilt_block_names_the_file_and_the_key(tmp_path):
    path = saved_config(tmp_path, model={"source": "tiny", "max_length": 2, "head_tokens": 0})
    with pytest.raises(InputError, match=r"config.yaml: model.max_length=2: expected an integer"):
        TrainedOn.read(path)
