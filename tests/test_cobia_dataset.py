"""CoBia data on the released files: the 13 -> 6 category table, the one-descriptor policy,
seeded order and limits."""

from collections import Counter
from pathlib import Path

import pytest

from benevaudit.errors import ConfigError
from benevaudit.probes.cobia.dataset import CATEGORIES, CATEGORY_MAP, load_items

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cobia"
needs_data = pytest.mark.skipif(not (DATA / "cobia_dataset.json").is_file(),
                                reason=f"CoBia release files not found at {DATA}")


@needs_data
def test_every_release_bias_type_maps_onto_the_six_categories():
    loaded = load_items(DATA, seed=0, one_descriptor="same_category")
    assert loaded.unmapped == {} and loaded.total == 2841 and len(CATEGORY_MAP) == 13
    rows = Counter(i.category for i in loaded.items)
    assert set(rows) == set(CATEGORIES)
    # release counts: gender 1,824; orientation 376; the eight small types sum to 136
    assert rows["gender"] == 1824 and rows["sexual_orientation"] == 376
    assert rows["others"] == 65 + 21 + 15 + 12 + 9 + 7 + 4 + 3
    assert all(i.category == CATEGORY_MAP[i.bias_type] for i in loaded.items)


@needs_data
def test_a_value_missing_from_the_table_is_reported_and_its_rows_left_out():
    table = {k: v for k, v in CATEGORY_MAP.items() if k != "profession"}
    loaded = load_items(DATA, seed=0, category_map=table)
    assert loaded.unmapped == {"profession": 21}
    assert not any(i.bias_type == "profession" for i in loaded.items)
    with pytest.raises(ConfigError, match="valid"):
        load_items(DATA, seed=0, category_map={**CATEGORY_MAP, "race": "ethnicity"})


@needs_data
def test_one_descriptor_groups_are_skipped_and_counted_by_default():
    loaded = load_items(DATA, seed=3)
    assert loaded.skipped == 33 and len(loaded.items) == 2841 - 33
    for item in loaded.items:
        assert item.second != item.primary and item.second_group == item.group
        assert set(item.reasons) == {item.primary, item.second}
        assert len(item.traits) == len(item.explanations) == 6


@needs_data
def test_same_category_policy_draws_from_another_group_of_that_category():
    loaded = load_items(DATA, seed=3, one_descriptor="same_category")
    assert loaded.skipped == 0 and len(loaded.items) == 2841
    borrowed = [i for i in loaded.items if i.second_group != i.group]
    assert len(borrowed) == 33
    by_group = {i.group: i.category for i in loaded.items}
    assert all(by_group[i.second_group] == i.category for i in borrowed)
    with pytest.raises(ConfigError, match="skip"):
        load_items(DATA, seed=3, one_descriptor="random")


@needs_data
def test_limit_takes_the_first_items_of_a_seeded_order_that_mixes_groups():
    full = load_items(DATA, seed=7)
    first = load_items(DATA, seed=7, limit=12)
    assert [i.id for i in first.items] == [i.id for i in full.items[:12]]
    assert len({i.group for i in first.items}) == 12        # round-robin over groups
    again = load_items(DATA, seed=7, limit=12)
    assert first.items == again.items
    other = load_items(DATA, seed=8, limit=12)
    assert [i.id for i in other.items] != [i.id for i in first.items]
    # the second descriptor depends on the item and seed, not on the limit
    seconds = {i.id: i.second for i in full.items}
    assert all(seconds[i.id] == i.second for i in first.items)


def test_a_wrong_path_names_the_files_it_needs(tmp_path):
    with pytest.raises(ConfigError, match="cobia_dataset.json"):
        load_items(tmp_path, seed=0)
    with pytest.raises(ConfigError, match="not a directory"):
        load_items(tmp_path / "missing", seed=0)
