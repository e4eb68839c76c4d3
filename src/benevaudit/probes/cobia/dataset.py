"""The CoBia data from a clone of the release or a flat folder of its files: items (group,
primary and second negative descriptor) with the group's six positive traits, and each
descriptor's one-sentence explanation.

The released ``cobia_dataset.json`` labels rows with 13 ``bias_type`` values while the study
reports six categories, so the mapping is an explicit table (``CATEGORY_MAP``); a value missing
from it is reported and its rows are left out, never guessed. A (group, descriptor) row needs a
second descriptor of the same group; 33 groups have only one, and by default their items are
skipped and counted (``one_descriptor="skip"``). ``"same_category"`` instead draws the second
descriptor from another group of the same category. The release's zero-shot, role-play and DAN
baselines need no second descriptor: ``keep_single=True`` keeps those rows with ``second`` None,
so only the constructed conversations (HCC, SCC) skip them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from benevaudit.errors import ConfigError, InputError
from benevaudit.files import read_json
from benevaudit.probes.cobia.release import FILES, Release, locate
from benevaudit.probes.spec import Category

CATEGORIES: tuple[str, ...] = get_args(Category)
# bias_type in the release -> the study's category (its six; everything else is "others")
CATEGORY_MAP: dict[str, str] = {
    "gender": "gender",
    "race": "race",
    "religion": "religion",
    "national_origin": "national_origin",
    "orientation": "sexual_orientation",
    "social_groups": "others",
    "profession": "others",
    "physical_appearance": "others",
    "disability_status": "others",
    "victim_status": "others",
    "political_affiliation": "others",
    "socioeconomic_status": "others",
    "family_status": "others",
}

@dataclass(frozen=True)
class Item:
    """One probe: a group, the descriptor the attack pushes (primary) and the one it links to."""

    id: str
    group: str                      # the dataset's key, verbatim
    category: str                   # one of CATEGORIES
    bias_type: str                  # the release's label
    primary: str                    # the row's descriptor
    second: str | None              # another descriptor (same group unless the policy says not);
    second_group: str | None        # None: the group has one (kept with keep_single)
    traits: tuple[str, ...]         # the group's six positive traits
    explanations: tuple[str, ...]   # one explanation per trait
    reasons: dict[str, str] = field(hash=False)   # descriptor -> its one-sentence explanation


@dataclass
class Loaded:
    """What :func:`load_items` found: the ordered items and what it had to leave out."""

    items: list[Item]
    skipped: int                       # items with no second descriptor (policy "skip")
    unmapped: dict[str, int]           # bias_type with no category -> rows left out
    total: int                         # rows in the dataset


def _read(release: Release, name: str) -> Any:
    path = release.files[name]
    value = read_json(path, expected=f"the CoBia release's {name}")
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object, as in the CoBia release; got "
                         f"{type(value).__name__}")
    return value


def stable_seed(seed: int, *parts: str) -> list[int]:
    """A seed sequence for numpy from the run seed and strings (Python's hash() is salted)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "little")]


def item_id(group: str, index: int) -> str:
    """``cobia-<group slug>-<row index>``: stable across runs, seeds and limits."""
    slug = re.sub(r"[^a-z0-9]+", "_", group.lower()).strip("_") or "group"
    return f"cobia-{slug}-{index:04d}"


def _check_group(path: Path, group: str, chars: dict[str, Any]) -> tuple[tuple, tuple]:
    entry = chars.get(group)
    if not isinstance(entry, dict):
        raise InputError(f"{path}: no entry for group {group!r}")
    traits, exps = entry.get("adj_list"), entry.get("exp_list")
    if not (isinstance(traits, list) and isinstance(exps, list) and len(traits) == len(exps) == 6):
        raise InputError(f"{path}: group {group!r}: expected "
                         "'adj_list' and 'exp_list' of 6 strings each")
    return tuple(traits), tuple(exps)


def load_items(path: str | Path | Release, seed: int,
               one_descriptor: Literal["skip", "same_category"],
               category_map: Mapping[str, str] | None, limit: int | None = None,
               keep_single: bool = False) -> Loaded:
    """Items of the release at ``path`` in a seeded order that mixes groups, first ``limit``.

    The order is round-robin over groups (groups shuffled, each group's rows shuffled), so the
    first N items come from N different groups where possible: ``women`` holds 61% of the rows
    and would otherwise dominate any small run. ``one_descriptor`` and ``category_map`` are
    ``probe.data``'s (``category_map`` None: the documented table).
    """
    release = path if isinstance(path, Release) else locate(path)
    data, chars, reasons = (_read(release, name) for name in FILES)
    mapping = dict(CATEGORY_MAP if category_map is None else category_map)
    unmapped: dict[str, int] = {}
    rows: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    total = 0
    for group, entries in data.items():
        if not isinstance(entries, list):
            raise InputError(f"{release.files[FILES[0]]}: group {group!r}: expected a list of "
                             f"rows, got {type(entries).__name__}")
        for index, row in enumerate(entries):
            total += 1
            for key in ("descriptor", "bias_type"):
                if not isinstance(row, dict) or not isinstance(row.get(key), str) \
                        or not row[key].strip():
                    raise InputError(f"{release.files[FILES[0]]}: group {group!r}, row {index}: "
                                     f"field {key!r} must be a non-empty string")
            if row["descriptor"] not in reasons:
                raise InputError(f"{release.files[FILES[2]]}: no explanation for descriptor "
                                 f"{row['descriptor']!r} (group {group!r}, row {index})")
            if row["bias_type"] not in mapping:
                unmapped[row["bias_type"]] = unmapped.get(row["bias_type"], 0) + 1
                continue
            rows.setdefault(group, []).append((index, row))
    return _pair(release.files[FILES[1]], rows, chars, reasons, mapping, seed,
                 (one_descriptor, keep_single), limit, unmapped, total)


def _pair(chars_path: Path, rows: dict[str, list[tuple[int, dict[str, Any]]]],
          chars: dict[str, Any], reasons: dict[str, str], mapping: dict[str, str], seed: int,
          policy: tuple[str, bool], limit: int | None, unmapped: dict[str, int],
          total: int) -> Loaded:
    """Attach a second descriptor to each row and lay the items out round-robin over groups."""
    by_category: dict[str, list[tuple[str, str]]] = {}
    for group, entries in rows.items():
        for _, row in entries:
            by_category.setdefault(mapping[row["bias_type"]], []).append((group, row["descriptor"]))
    rng = np.random.default_rng(seed)
    groups = sorted(rows)
    queues: list[list[Item]] = []
    skipped = 0
    for gi in rng.permutation(len(groups)):
        group = groups[gi]
        traits, exps = _check_group(chars_path, group, chars)
        queue: list[Item] = []
        descriptors = [r["descriptor"] for _, r in rows[group]]
        for index, row in rows[group]:
            category, primary = mapping[row["bias_type"]], row["descriptor"]
            pick = np.random.default_rng(stable_seed(seed, group, primary))
            others = [(group, d) for d in descriptors if d != primary]
            if not others and policy[0] == "same_category":
                others = [(g, d) for g, d in by_category[category] if g != group and d != primary]
            if not others:
                skipped += 1
                if policy[1]:
                    queue.append(Item(item_id(group, index), group, category, row["bias_type"],
                                      primary, None, None, traits, exps,
                                      {primary: reasons[primary]}))
                continue
            second_group, second = others[int(pick.integers(len(others)))]
            queue.append(Item(item_id(group, index), group, category, row["bias_type"], primary,
                              second, second_group, traits, exps,
                              {primary: reasons[primary], second: reasons[second]}))
        queues.append([queue[i] for i in rng.permutation(len(queue))])
    ordered = [q[k] for k in range(max((len(q) for q in queues), default=0))
               for q in queues if k < len(q)]
    if limit is not None:
        ordered = ordered[:limit]
    return Loaded(ordered, skipped, unmapped, total)
