"""Every config group, option and key of conf/, with what the specs and the YAML say of each:
the data of the generated reference pages (scripts/docs_reference.py renders it).

An option is composed on its own (``compose("detector/llama_guard3")``: its defaults list, with
the packages Hydra gives each file), so a key's default is what that option sets, before any
entrypoint or command line. A key's type and allowed values come from the spec that reads its
block (each entrypoint's run spec, ``pipelines/<name>.py``; a union of kinds resolved by the
block's tags); its description from the YAML comments of the files that set it (the earliest
file with a comment: the base an option builds on says what a key is for) or, failing those,
from the comment the spec's source gives the field.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from functools import cache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from docs_specs import (block_spec, class_summary, field_comment, field_description, field_info,
                        mapping_values, owner_of, spec_class, tag_choices, type_info)
from docs_yaml import read_comments

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
# entrypoint -> its run spec (pipelines/<name>.py), in the order the pages list them
RUNS = {"train": "TrainRun", "evaluate": "EvaluateRun", "attribute": "AttributeRun",
        "generate": "GenerateRun", "analyze": "AnalyzeRun", "detect": "DetectRun",
        "probe": "ProbeRun", "report": "ReportRun"}
UNTYPED = {"paths": "read by Hydra's interpolations, not a spec",
           "hydra": "Hydra's own settings, not a spec"}
NOT_GROUPS = {"experiment", "local"}        # pins (their own page section) and conf/local/
TAGS = ("kind", "family")                   # the keys a block's kind is told apart by


@dataclass
class Row:
    """One key of an option: where it sits, its type, allowed values, default, description."""

    key: str
    type: str
    allowed: tuple[Any, ...] | None
    default: Any
    description: str
    source: str                     # the file (or spec class) the description comes from
    block: bool = False


@dataclass
class Option:
    group: str
    name: str
    header: str
    spec: str                       # the spec class that reads it ("" where untyped)
    spec_summary: str
    rows: list[Row] = field(default_factory=list)


@dataclass
class Group:
    name: str
    read_by: list[str]
    options: list[Option]


def run_spec(name: str) -> type:
    return getattr(importlib.import_module(f"benevaudit.pipelines.{name}"), RUNS[name])


def loader():
    return GlobalHydra.instance().config_loader()


def choices(primary: str) -> dict[str, Any]:
    """The config groups an entrypoint composes and its default option of each."""
    found = loader().compute_defaults_list(primary, [], RunMode.RUN).overrides.known_choices
    return {g: c for g, c in found.items() if not g.startswith("hydra/") and g not in ("hydra",)}


def comments_of(config_name: str) -> dict[str, tuple[str, str]]:
    """Dotted key (from the config root) -> (its description, the file it comes from), over the
    files a config composes: the earliest file with a comment for the key, else the earliest
    file that sets it (with no description)."""
    found: dict[str, tuple[str, str]] = {}
    for default in loader().compute_defaults_list(config_name, [], RunMode.RUN).defaults:
        path = CONF / f"{default.config_path}.yaml"
        if not path.is_file():
            continue                              # Hydra's own hydra/* files
        package = default.package or ""
        for key, text in read_comments(path).keys.items():
            dotted = f"{package}.{key}" if package else key
            known = found.get(dotted)
            if known is None or (text and not known[0]):
                found[dotted] = (text, str(path.relative_to(ROOT)))
    return found


@cache
def llm_comments() -> dict[str, tuple[str, str]]:
    """What conf/llm/*.yaml says of each key of an ``llm`` block, for every block of that shape
    (a detector's, a target's, a judge's): the first file that describes the key."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted((CONF / "llm").glob("*.yaml")):
        for key, text in read_comments(path).keys.items():
            if text and key not in found:
                found[key] = (text, str(path.relative_to(ROOT)))
    return found


def group_annotations(group: str) -> list[Any]:
    """The annotations a group's block is read under, one per run spec with that field, in
    entrypoint order (detect.py's ``data`` takes kinds train.py's does not)."""
    if group == "logger":
        from benevaudit.outputs.spec import LoggerBlock
        return [LoggerBlock.model_fields["logger"].annotation]
    if group == "llm":
        from benevaudit.llm.spec import LLMSpec
        return [LLMSpec]
    return [run_spec(name).model_fields[group].annotation for name in RUNS
            if group in run_spec(name).model_fields]


def fmt(value: Any) -> str:
    """A default as YAML writes it in flow style; ``???`` as required."""
    if value == "???":
        return "required"
    if isinstance(value, str):
        return value if value.strip() and value == value.strip() else repr(value)
    return yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True
                          ).strip().removesuffix("...").strip()


def walk(value: Mapping[str, Any], annotation: Any, prefix: str,
         comments: Mapping[str, tuple[str, str]], rows: list[Row]) -> None:
    """Append a row per key of ``value`` (a block under ``annotation``; None: untyped), a
    nested block's row before its keys'."""
    cls = block_spec(annotation, value) if annotation is not None else None
    for key, item in value.items():
        dotted = f"{prefix}.{key}".lstrip(".")
        text, source = comments.get(dotted, ("", ""))
        owner = owner_of(cls, annotation, key) if cls is not None else None
        found = field_info(owner, key) if owner is not None else None
        if found is None:                              # untyped (paths, hydra)
            if isinstance(item, Mapping) and any(c[0] for k, c in comments.items()
                                                 if k.startswith(f"{dotted}.")):
                walk(item, None, dotted, comments, rows)
            else:
                kind = "any" if item is None else type_info(type(item)).text
                rows.append(Row(dotted, kind, None, item, text, source))
            continue
        name, info = found
        if not text and field_comment(owner, name):
            text, source = field_comment(owner, name), f"{owner.__module__}.{owner.__name__}"
        if not text and prefix.split(".")[-1] == "llm" and key in llm_comments():
            text, source = llm_comments()[key]            # any llm block: the llm/ group's words
        if not text and key in TAGS and type_info(info.annotation).allowed:
            text, source = (f"the kind of `{prefix}` block this is: it selects the spec that "
                            f"reads the block ({owner.__name__}) and so the keys it takes"), "tag"
        sub = block_spec(info.annotation, item)
        values = mapping_values(info.annotation)
        if sub is not None:
            text = text or class_summary(sub)
            rows.append(Row(dotted, type_info(info.annotation, info.metadata).text, None, None,
                            text, source, block=True))
            walk(item, info.annotation, dotted, comments, rows)
        elif isinstance(item, Mapping) and item and spec_class(values) is not None:
            rows.append(Row(dotted, f"mapping of name to block ({spec_class(values).__name__})",
                            None, None, text, source, block=True))
            for entry, sub_value in item.items():
                if isinstance(sub_value, Mapping):
                    walk(sub_value, values, f"{dotted}.{entry}", comments, rows)
                else:
                    rows.append(Row(f"{dotted}.{entry}", "null (off)", None, sub_value,
                                    comments.get(f"{dotted}.{entry}", ("", ""))[0], source))
        elif isinstance(item, Mapping) and any(comments.get(f"{dotted}.{k}", ("",))[0]
                                               for k in item):
            rows.append(Row(dotted, type_info(info.annotation, info.metadata).text, None, None,
                            text, source, block=True))     # a free mapping its YAML documents
            walk(item, None, dotted, comments, rows)
        else:
            kind = type_info(info.annotation, info.metadata)
            words = field_description(owner, name)
            allowed = (tag_choices(annotation, key) if key in ("backend", "source")
                       and hasattr(owner, "foreign_key") else kind.allowed)
            rows.append(Row(dotted, words if words and not kind.allowed else kind.text,
                            allowed, item, text, source))


def option(group: str, name: str, annotations: list[Any]) -> Option:
    """One option of a group, composed alone, each of its keys a row; read under the first of
    ``annotations`` that has a spec for it (none: untyped)."""
    config_name = f"{group}/{name}"
    path = CONF / f"{config_name}.yaml"
    comments = comments_of(config_name)
    cfg = OmegaConf.to_container(compose(config_name), resolve=False)
    package = read_comments(path).package or group
    node: Any = cfg
    for part in package.split("."):
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    node = node if isinstance(node, Mapping) else {}
    if package != group:                      # external.edos: one entry of a mapping
        annotations = [mapping_values(a) or a for a in annotations]
    annotation, cls = None, None
    for candidate in annotations:
        cls = block_spec(candidate, node)
        if cls is not None:
            annotation = candidate
            break
    found = Option(group, name, read_comments(path).header, cls.__name__ if cls else "",
                   class_summary(cls) if cls else "")
    walk(node, annotation, package, comments, found.rows)
    return found


def groups() -> list[Group]:
    """Every config group under conf/ with its options, in name order."""
    read_by: dict[str, list[str]] = {}
    for primary in RUNS:
        for group in choices(primary):
            read_by.setdefault(group, []).append(primary)
    found = []
    for folder in sorted(p for p in CONF.iterdir() if p.is_dir()):
        name = folder.name
        if name in NOT_GROUPS:
            continue
        annotations = [] if name in UNTYPED else group_annotations(name)
        names = sorted(p.stem for p in folder.glob("*.yaml"))
        users = read_by.get(name) or (["generate"] if name == "llm" else [])
        found.append(Group(name, users, share_descriptions([option(name, o, annotations)
                                                            for o in names])))
    return found


def share_descriptions(options: list[Option]) -> list[Option]:
    """A key one option of a group describes means the same in its siblings read by the same
    spec (``target.name`` in every target): a row without a description takes its sibling's,
    and where no sibling of its spec has one, another spec's (``probe.data`` of CoBia is not
    FairMT-Bench's)."""
    own: dict[tuple[str, str], tuple[str, str]] = {}
    any_spec: dict[str, tuple[str, str]] = {}
    for opt in options:
        for row in opt.rows:
            if row.description:
                own.setdefault((opt.spec, row.key), (row.description, row.source))
                any_spec.setdefault(row.key, (row.description, row.source))
    for opt in options:
        for row in opt.rows:
            found = own.get((opt.spec, row.key)) or any_spec.get(row.key)
            if not row.description and found:
                row.description, row.source = found
    return options


def own_rows(primary: str) -> list[Row]:
    """An entrypoint's own top-level keys (those no group option sets), as composed by default
    (its default ``experiment`` pin included); ``task_name`` and the rest of ``specs.ELSEWHERE``
    are Hydra's."""
    from benevaudit.specs import ELSEWHERE

    cfg = OmegaConf.to_container(compose(primary), resolve=False)
    grouped = {g.split("/")[0] for g in choices(primary)}
    own = {k: v for k, v in cfg.items() if k not in grouped and k not in ELSEWHERE}
    rows: list[Row] = []
    walk(own, run_spec(primary), "", comments_of(primary), rows)
    return rows


def session():
    """The Hydra context every function here composes in. Composing an option alone warns of
    a defaults list without ``_self_`` (its place in the entrypoint decides): not ours to say."""
    warnings.filterwarnings("ignore", message="In '.*': Defaults list is missing `_self_`")
    return initialize_config_dir(str(CONF), version_base="1.3")


