"""CoBia data: on the released files (the data tier, ``make test-data``), the 13 -> 6 category
table, the one-descriptor policy, seeded order and limits; on the project's stand-in (default
tier), the release's layout and the loader's behaviour on it."""

import json
from collections import Counter
from pathlib import Path

import pytest

from benevaudit.errors import ConfigError
from benevaudit.probes.cobia.dataset import CATEGORIES, CATEGORY_MAP, FILES, load_items
from benevaudit.outputs.stand_in_files import write_files
from benevaudit.probes.cobia.stand_in import GROUPS, stand_in_files
from benevaudit.probes.spec import CobiaData


@pytest.mark.data
def test_every_release_bias_type_maps_onto_the_six_categories(cobia_release):
    loaded = load_items(cobia_release, seed=0, one_descriptor="same_category", category_map=None)
    assert loaded.unmapped == {} and loaded.total == 2841 and len(CATEGORY_MAP) == 13
    rows = Counter(i.category for i in loaded.items)
    assert set(rows) == set(CATEGORIES)
    # release counts: gender 1,824; orientation 376; the eight small types sum to 136
    assert rows["gender"] == 1824 and rows["sexual_orientation"] == 376
    assert rows["others"] == 65 + 21 + 15 + 12 + 9 + 7 + 4 + 3
    assert all(i.category == CATEGORY_MAP[i.bias_type] for i in loaded.items)


@pytest.mark.data
def test_a_value_missing_from_the_table_is_reported_and_its_rows_left_out(cobia_release):
    table = {k: v for k, v in CATEGORY_MAP.items() if k != "profession"}
    loaded = load_items(cobia_release, seed=0, one_descriptor="skip", category_map=table)
    assert loaded.unmapped == {"profession": 21}
    assert not any(i.bias_type == "profession" for i in loaded.items)
    with pytest.raises(ConfigError, match=r"probe.data.category_map=.*: expected null \(the "
                                          r"documented table\) or a mapping \{bias_type: "
                                          r"category\}, each category one of \['gender', "):
        CobiaData.of({"path": None, "one_descriptor": "skip",
                      "category_map": {**CATEGORY_MAP, "race": "ethnicity"}}, "probe.data")


@pytest.mark.data
def test_one_descriptor_groups_are_skipped_and_counted_by_default(cobia_release):
    loaded = load_items(cobia_release, seed=3, one_descriptor="skip", category_map=None)
    assert loaded.skipped == 33 and len(loaded.items) == 2841 - 33
    for item in loaded.items:
        assert item.second != item.primary and item.second_group == item.group
        assert set(item.reasons) == {item.primary, item.second}
        assert len(item.traits) == len(item.explanations) == 6


@pytest.mark.data
def test_same_category_policy_draws_from_another_group_of_that_category(cobia_release):
    loaded = load_items(cobia_release, seed=3, one_descriptor="same_category", category_map=None)
    assert loaded.skipped == 0 and len(loaded.items) == 2841
    borrowed = [i for i in loaded.items if i.second_group != i.group]
    assert len(borrowed) == 33
    by_group = {i.group: i.category for i in loaded.items}
    assert all(by_group[i.second_group] == i.category for i in borrowed)
    with pytest.raises(ConfigError, match=r"probe.data.one_descriptor='random': expected one of "
                                          r"\['skip', 'same_category'\]"):
        CobiaData.of({"path": None, "one_descriptor": "random", "category_map": None},
                      "probe.data")


@pytest.mark.data
def test_limit_takes_the_first_items_of_a_seeded_order_that_mixes_groups(cobia_release):
    full = load_items(cobia_release, seed=7, one_descriptor="skip", category_map=None)
    first = load_items(cobia_release, seed=7, one_descriptor="skip", category_map=None, limit=12)
    assert [i.id for i in first.items] == [i.id for i in full.items[:12]]
    assert len({i.group for i in first.items}) == 12        # round-robin over groups
    again = load_items(cobia_release, seed=7, one_descriptor="skip", category_map=None, limit=12)
    assert first.items == again.items
    other = load_items(cobia_release, seed=8, one_descriptor="skip", category_map=None, limit=12)
    assert [i.id for i in other.items] != [i.id for i in first.items]
    # the second descriptor depends on the item and seed, not on the limit
    seconds = {i.id: i.second for i in full.items}
    assert all(seconds[i.id] == i.second for i in first.items)


def test_a_wrong_path_names_the_files_it_needs(tmp_path):
    with pytest.raises(ConfigError, match="cobia_dataset.json"):
        load_items(tmp_path, seed=0, one_descriptor="skip", category_map=None)
    with pytest.raises(ConfigError, match="not a directory"):
        load_items(tmp_path / "missing", seed=0, one_descriptor="skip", category_map=None)


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    return write_files(tmp_path / "stand_in", stand_in_files())


def test_stand_in_is_written_byte_for_byte_the_same(stand_in, tmp_path):
    again = write_files(tmp_path / "again", stand_in_files())
    for name in FILES:
        assert (stand_in / name).read_bytes() == (again / name).read_bytes()


def test_stand_in_has_the_release_layout(stand_in):
    data = json.loads((stand_in / FILES[0]).read_text(encoding="utf-8"))
    chars = json.loads((stand_in / FILES[1]).read_text(encoding="utf-8"))
    reasons = json.loads((stand_in / FILES[2]).read_text(encoding="utf-8"))
    rows = [row for entries in data.values() for row in entries]
    assert all(set(row) == {"descriptor", "source", "bias_type", "llama3guard"} for row in rows)
    assert set(chars) == set(data)
    for group, entry in chars.items():
        assert set(entry) == {"adj_list", "exp_list"}
        assert len(entry["adj_list"]) == len(entry["exp_list"]) == 6
        assert all(e.startswith(group[:1].upper() + group[1:] + " are ") for e in entry["exp_list"])
    assert {row["descriptor"] for row in rows} == set(reasons)
    assert all(r.startswith("This characteristic in them ") for r in reasons.values())
    assert (stand_in / FILES[0]).read_text(encoding="utf-8").startswith('{\n    "')


def test_stand_in_loads_with_categories_and_one_skipped_group(stand_in):
    loaded = load_items(stand_in, seed=0, one_descriptor="skip", category_map=None)
    assert loaded.total == 17 and loaded.unmapped == {}
    assert loaded.skipped == 1 and len(loaded.items) == 16        # Orrin Vale: one descriptor
    assert {i.category for i in loaded.items} == {"national_origin", "religion", "others"}
    assert len({i.group for i in loaded.items[:7]}) == 7            # round-robin over groups
    borrowed = load_items(stand_in, seed=0, one_descriptor="same_category", category_map=None)
    assert borrowed.skipped == 0 and len(borrowed.items) == 17
    (pilgrims,) = [i for i in borrowed.items if i.group == "Orrin Vale pilgrims"]
    assert pilgrims.second_group == "followers of the Ninefold Lantern"   # the other faith


@pytest.mark.data
def test_stand_in_shares_no_group_or_descriptor_with_the_release(stand_in, cobia_release):
    release = json.loads((cobia_release / FILES[0]).read_text(encoding="utf-8"))
    ours = json.loads((stand_in / FILES[0]).read_text(encoding="utf-8"))
    assert not {g.lower() for g in release} & {g.lower() for g in ours}
    words = {row["descriptor"].lower() for rows in release.values() for row in rows}
    assert not words & {row["descriptor"].lower() for rows in ours.values() for row in rows}
    assert set(ours) == set(GROUPS)
