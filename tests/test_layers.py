"""The library's imports run one way: a layer imports only its own layer and the ones below.

Every module of ``src/benevaudit`` is read with ``ast``: top-level imports, imports inside
functions and ``TYPE_CHECKING`` blocks, relative imports, and module paths written as strings
for lazy loading (``"benevaudit.llm.hf:HFChatModel"``) all count. A package is placed by its
first name under ``benevaudit`` (``report/sections/x.py`` is in ``report``); top-level modules
(``schema``, ``corpus``, ``text``, ``errors``, ``splits``, ``precision``, …) are the core. The
library below ``pipelines`` also never imports Hydra or OmegaConf: it takes plain values.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "benevaudit"

# The rule, written down once: a module may import modules of its own rank or lower.
LAYERS: dict[str, int] = {
    "core": 0,          # schema, corpus, text, errors, splits, precision: every top-level module
    "llm": 1, "encoders": 1,
    "metrics": 2,
    "audit": 3, "generation": 3, "detectors": 3, "probes": 3,
    "report": 4,
    "pipelines": 5,
}
CONFIG_LIBRARIES = ("hydra", "omegaconf")   # only pipelines read configs
MODULE_STRING = re.compile(r"^benevaudit(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$")


@dataclass(frozen=True)
class Import:
    line: int
    target: str     # dotted module path, e.g. benevaudit.audit.models
    code: str       # the statement as written


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str, root: Path) -> str:
    """``benevaudit.report.sections.x`` -> ``report``; a top-level module -> ``core``."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"
    return parts[1] if (root / parts[1]).is_dir() else "core"


def imports_of(path: Path, module: str) -> list[Import]:
    """Every import in the file, wherever it is written, as absolute module paths."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node in ast.walk(tree):
        text = lines[node.lineno - 1].strip() if hasattr(node, "lineno") else ""
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, a.name, text) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            if base == "benevaudit":   # `from benevaudit import audit` imports benevaudit.audit
                found += [Import(node.lineno, f"{base}.{a.name}", text) for a in node.names]
            else:
                found.append(Import(node.lineno, base, text))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and MODULE_STRING.match(node.value)):
            found.append(Import(node.lineno, node.value.split(":")[0], repr(node.value)))
    return found


def violations(root: Path) -> list[str]:
    """One line per import that runs upward, or per module whose package has no layer."""
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        own = layer_of(module, root)
        where = path.relative_to(root.parent.parent)   # src/benevaudit/…
        if own not in LAYERS:
            problems.append(f"{where}: package benevaudit.{own} has no layer; add it to LAYERS "
                            f"in tests/test_layers.py")
            continue
        for imp in imports_of(path, module):
            top = imp.target.split(".")[0]
            if top in CONFIG_LIBRARIES and own != "pipelines":
                problems.append(f"{where}:{imp.line} ({own}) imports {imp.target}; only "
                                f"pipelines read configs: `{imp.code}`")
            if top != "benevaudit":
                continue
            theirs = layer_of(imp.target, root)
            if LAYERS.get(theirs, -1) > LAYERS[own]:
                problems.append(f"{where}:{imp.line} ({own}, layer {LAYERS[own]}) imports "
                                f"{imp.target} ({theirs}, layer {LAYERS[theirs]}): `{imp.code}`")
    return problems


def test_imports_run_one_way() -> None:
    problems = violations(SRC)
    assert not problems, "imports against the layer order:\n" + "\n".join(problems)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    """A synthetic package with one upward import of each kind; every one is reported."""
    root = tmp_path / "src" / "benevaudit"
    for pkg in ("", "metrics/", "audit/", "audit/attribution/", "report/", "report/sections/",
                "pipelines/"):
        write(root, f"{pkg}__init__.py", "")
    write(root, "metrics/diversity.py",                     # a function-level import
          "import numpy\n\n\ndef f():\n    from benevaudit.audit.models import load\n")
    write(root, "audit/attribution/suite.py",               # a relative import, two levels up
          "from ...report.sections import table\n")
    write(root, "report/sections/table.py",                 # fine: report imports audit
          "from benevaudit.audit.attribution import suite\nfrom benevaudit import schema\n")
    write(root, "llm/__init__.py", 'BACKENDS = {"x": "benevaudit.pipelines.cli:guarded"}\n')
    write(root, "schema.py", "from benevaudit import metrics\n")
    write(root, "audit/config.py", "from omegaconf import DictConfig\n")
    write(root, "pipelines/train.py",                      # fine: pipelines read configs
          "import hydra\nfrom benevaudit.report.sections import table\n")
    write(root, "newthing/x.py", "")

    problems = violations(root)
    expected = [
        "src/benevaudit/audit/attribution/suite.py:1 (audit, layer 3) imports "
        "benevaudit.report.sections (report, layer 4): `from ...report.sections import table`",
        "src/benevaudit/audit/config.py:1 (audit) imports omegaconf; only pipelines read configs: "
        "`from omegaconf import DictConfig`",
        "src/benevaudit/llm/__init__.py:1 (llm, layer 1) imports benevaudit.pipelines.cli "
        "(pipelines, layer 5): `'benevaudit.pipelines.cli:guarded'`",
        "src/benevaudit/metrics/diversity.py:5 (metrics, layer 2) imports benevaudit.audit.models "
        "(audit, layer 3): `from benevaudit.audit.models import load`",
        "src/benevaudit/newthing/x.py: package benevaudit.newthing has no layer; add it to LAYERS "
        "in tests/test_layers.py",
        "src/benevaudit/schema.py:1 (core, layer 0) imports benevaudit.metrics (metrics, layer 2): "
        "`from benevaudit import metrics`",
    ]
    assert sorted(problems) == expected


@pytest.mark.parametrize("module, layer", [
    ("benevaudit", "core"), ("benevaudit.schema", "core"), ("benevaudit.precision", "core"),
    ("benevaudit.encoders.models", "encoders"), ("benevaudit.report.heatmap", "report"),
    ("benevaudit.audit.attribution.store", "audit"),
])
def test_modules_are_placed_by_their_package(module: str, layer: str) -> None:
    assert layer_of(module, SRC) == layer
