"""The generated reference pages (docs/reference/, written by scripts/docs_reference.py) say
what conf/ and the typed specs say, today: every config key has a description, every option
file a header, the committed pages are exactly what the generator writes now, a few rows are
checked against the spec classes themselves, and the metrics.json families documented are the
ones the code writes."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import get_args

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_config  # noqa: E402
import docs_reference  # noqa: E402
from docs_yaml import read_comments  # noqa: E402

# First path segments of "x/y" strings in src/ that are not metrics.json families, and why.
NOT_METRICS = {
    "benevaudit": "Inspect AI names of benevaudit's tasks, solvers, scorers and metrics",
    "annotation": "CoBia's blind annotation sheets, a result's files (annotation/key.csv)",
    "audio": "file paths of FairDialogue's stimuli (audio/<task>/<item>__<group>.wav)",
    "code": "the FairMT-Bench release's scripts (code/evaluation_*.py)",
    "data": "a release's files (data/edos_labelled_aggregated.csv)",
    "dataset": "the CoBia release's folders",
    "m": "a throwaway prefix of confusion_rates inside the transfer metrics",
    "n": "the text n/a in report tables",
    "released": "a suffix of fairness/<task>/<attribute>/released/…, not a root",
    "val": "Lightning's logged validation metrics (the W&B or CSV logger), not metrics.json",
}


@pytest.fixture(scope="module")
def found() -> list[docs_config.Group]:
    with docs_config.session():
        return docs_config.groups()


@pytest.fixture(scope="module")
def own() -> dict[str, list[docs_config.Row]]:
    with docs_config.session():
        return {name: docs_config.own_rows(name) for name in docs_config.RUNS}


def undescribed(rows: list[docs_config.Row]) -> list[str]:
    """The keys among ``rows`` that a reader would find with no description (blocks aside)."""
    return [f"{r.key} (set in {r.source or '?'})" for r in rows
            if not r.block and not r.description.strip()]


def test_every_option_key_has_a_description(found, own) -> None:
    missing = [f"{g.name}={o.name}: {key}" for g in found for o in g.options
               for key in undescribed(o.rows)]
    missing += [f"{name}.py: {key}" for name, rows in own.items() for key in undescribed(rows)]
    assert not missing, ("config keys without a description (add a comment after the key, or "
                         "on the line above, in conf/):\n  " + "\n  ".join(missing))


def test_the_check_catches_a_key_without_a_description() -> None:
    rows = [docs_config.Row("probe.x", "bool", None, True, "", "conf/probe/x.yaml"),
            docs_config.Row("probe.y", "bool", None, True, "said", "conf/probe/x.yaml"),
            docs_config.Row("probe.z", "block", None, None, "", "", block=True)]
    assert undescribed(rows) == ["probe.x (set in conf/probe/x.yaml)"]


def test_every_option_file_says_what_it_is_for() -> None:
    headless = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "conf").rglob("*.yaml"))
                if "local" not in p.parts and not read_comments(p).header]
    assert not headless, f"option files whose first lines say nothing: {headless}"


def test_every_key_is_read_by_a_spec(found) -> None:
    """A typed group's keys all resolve to a field of the spec that reads its block."""
    unknown = [f"{g.name}={o.name}: {r.key}" for g in found if g.name not in docs_config.UNTYPED
               for o in g.options for r in o.rows if r.type == "?"]
    untyped = [f"{g.name}={o.name}" for g in found if g.name not in docs_config.UNTYPED
               for o in g.options if not o.spec]
    assert not unknown and not untyped, (unknown, untyped)


def test_the_committed_pages_are_what_the_specs_give(found) -> None:
    stale = docs_reference.stale(docs_reference.pages(found))
    assert not stale, ("docs/reference/ is out of date with conf/ and the specs; run "
                       f"`make docs-reference` and commit the result: {stale}")


def test_the_configuration_reference_reads_the_specs(found) -> None:
    """Known answers, from the spec classes and the YAML, not from the generator."""
    from benevaudit.detectors.guards import GUARD_KINDS
    from benevaudit.probes.spec import AudioSpec

    page = (ROOT / "docs" / "reference" / "config" / "probe.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `probe.audio.source` |"))
    sources = get_args(AudioSpec.model_fields["source"].annotation)
    assert sources == ("espeak", "tts_server", "dir")
    assert ", ".join(f"`{s}`" for s in sources) in row
    assert "`espeak`" in row.split(" | ")[3]             # the default, from base/fairdialogue.yaml
    assert "espeak-ng voices" in row                     # the description, from its YAML comment

    guards = next(g for g in found if g.name == "detector")
    kinds = {r.allowed for o in guards.options for r in o.rows
             if r.key == "detector.kind" and o.spec == "GuardSpec"}
    assert kinds == {tuple(GUARD_KINDS)}

    trainer = (ROOT / "docs" / "reference" / "config" / "trainer.md").read_text()
    assert re.search(r"\| `trainer.max_epochs` \| int ≥ 1 \|", trainer)
    assert "required" in (ROOT / "docs" / "reference" / "config" / "data.md").read_text()


def test_every_entrypoint_and_group_has_its_page(found) -> None:
    entry = (ROOT / "docs" / "reference" / "entrypoints.md").read_text()
    assert all(f"## `{name}.py`" in entry for name in docs_config.RUNS)
    shims = sorted(p.stem for p in ROOT.glob("*.py"))
    assert shims == sorted(docs_config.RUNS), "an entrypoint the reference does not list"
    nav = (ROOT / "mkdocs.yml").read_text()
    folders = sorted(p.name for p in (ROOT / "conf").iterdir()
                     if p.is_dir() and p.name not in docs_config.NOT_GROUPS)
    assert [g.name for g in found] == folders
    assert all(f"reference/config/{name}.md" in nav for name in folders), \
        "a config group's page is missing from mkdocs.yml's nav"


def roots(pattern: str) -> set[str]:
    """The first path segments a documented family's alternatives start with
    (``a/x, {b,c}/y`` gives a, b, c)."""
    found: set[str] = set()
    depth, start = 0, 0
    parts = []
    for i, char in enumerate(pattern + ","):
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(pattern[start:i].strip())
            start = i + 1
    for part in parts:
        head = part.split("/")[0]
        if head.startswith("{"):
            found |= set(head.strip("{}").split(","))
        elif "/" in part and head.isidentifier():         # "…/snsr" continues the one before
            found.add(head)
    return found


def code_roots() -> set[str]:
    """First segments of every ``root/…`` string (or f-string) in src/benevaudit."""
    found = set()
    for path in (ROOT / "src" / "benevaudit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{}"
                               for v in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            match = re.fullmatch(r"([a-z][a-z_]*)/[A-Za-z_{}<>0-9/.+-]*", text)
            if match:
                found.add(match.group(1))
    return found


def test_the_roots_helper() -> None:
    assert roots("a/x, {b,c}/y[_ci_low/_ci_high]") == {"a", "b", "c"}
    assert roots("<rate>_corrected") == set()


def test_the_metric_families_are_the_ones_the_code_writes() -> None:
    data = yaml.safe_load(docs_reference.RUN_FILES.read_text(encoding="utf-8"))
    documented = {r for section in data["metrics"] for key, _ in section["keys"]
                  for r in roots(key)}
    written = code_roots()
    assert documented - written == set(), "documented families no code writes"
    missing = written - documented - set(NOT_METRICS)
    assert not missing, (f"metrics.json families the code writes with no entry in "
                         f"scripts/docs_run_files.yaml: {sorted(missing)}")


def test_the_version_and_the_changelog() -> None:
    import benevaudit

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert benevaudit.__version__ == version
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog and "### Added" in changelog


def test_the_comment_reader(tmp_path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("# What it is for.\n# Its second line.\ndefaults:\n  - base@_here_\n"
                    "  - _self_\n\na: 1          # after the key\n# above b\nb:\n"
                    "  c: 'x # not a comment'\n  d: [1, 2]   # a list\n  e:\n    - f: 1\n"
                    "g: \"#\"\n")
    found = read_comments(path)
    assert found.header == "What it is for. Its second line."
    assert found.keys == {"a": "after the key", "b": "above b", "b.c": "", "b.d": "a list",
                          "b.e": "", "g": ""}
