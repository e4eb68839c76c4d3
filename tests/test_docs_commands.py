"""Every command shown in the docs is checked, so the docs cannot rot.

Collected: each line of every fenced ``bash`` block in README.md and docs/**/*.md, with the
files the docs include through ``--8<--`` (the recipes' READMEs, experiments/*/README.md)
expanded as mkdocs expands them; a line ending in a backslash joins the next; comments are
dropped; ``a && b`` is two commands; leading ``VAR=value`` words are the command's environment.
Placeholders (``<run>``, ``<clone>``, ``…``, ``...``) are read as values still to be given.

What each command must pass, by kind (a command of no kind below fails the test):

- ``python <entrypoint>.py …`` (or ``.venv/bin/python …``): composed by Hydra as the entrypoint
  composes it (a multirun expanded into its jobs, with its pin's sweeper params:
  ``recipe_fixtures.jobs``) and validated against the entrypoint's run spec
  (``pipelines.config.validated``), as tests/test_spec_options.py validates every option. A
  value naming a file or folder the test cannot have (``data.path``, ``ckpt``, ``lexicon.path``,
  ``predictions.path``, ``probe.data.path``, ``runs``, …: the keys of ``STAND_INS``) is replaced by
  a stand-in of the kind the composed block asks for (a corpus file, an EDOS, DiaSafety or
  labelled gold set, a CoBia or FairMT-Bench stand-in release, a training run directory with a
  model and a checkpoint, a lexicon, predictions); every other value is validated as written,
  so a misspelt key, option or value fails here.
- a recipe (``experiments/*/*.sh``, ``bash benchmarks/*.sh``): it exists, is executable when the
  docs run it directly, and ``bash -n`` parses it. A recipe with an echo mode
  (``ECHO_ONLY=1``: detection, external validity) runs in it with the command's environment and
  arguments (stand-ins for the data it names), must exit 0, and every entrypoint command it
  prints is checked as above. The others' pinned settings are checked by tests/test_experiments.py.
- ``python <script>.py …`` (experiments/, benchmarks/): the script exists, compiles, and defines
  every ``--flag`` the command passes.
- ``make <target> [VAR=value]``: the Makefile has the target.
- ``ALLOWED``: commands this tier cannot run, each with its reason.

One example runs for real (``test_the_own_predictions_example_runs``, slow tier): the
``printf … > mine.csv`` / ``detect.py detector=external predictions.path=mine.csv`` pair.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gold_fixtures import write_diasafety, write_edos, write_labelled
from omegaconf import OmegaConf
from recipe_fixtures import jobs

ROOT = Path(__file__).resolve().parents[1]
RUNS = {"train": "TrainRun", "evaluate": "EvaluateRun", "attribute": "AttributeRun",
        "detect": "DetectRun", "probe": "ProbeRun", "generate": "GenerateRun",
        "analyze": "AnalyzeRun", "report": "ReportRun"}
PYTHONS = ("python", ".venv/bin/python", ".venv-vllm/bin/python")
ALLOWED = {
    "git clone": "fetches a release over the network; the releases' layouts are checked on "
                 "stand-ins here and on the releases themselves in the data tier",
    "wandb login": "asks for W&B credentials; the report command beside it is checked",
    "cat ": "prints the file the command above it writes",
    "printf ": "writes mine.csv for the command below it; both run for real in "
               "test_the_own_predictions_example_runs (slow tier)",
    "for ": "a SLURM loop (sbatch) around experiments/planted_cues/run.sh, which the same "
            "block runs directly",
    "inspect eval ": "Inspect AI's command, in .venv-inspect: the inspect tier runs the task "
                     "(tests/test_inspect.py)",
}
# Commands the docs show that would fail as a user types them, in files this test does not own:
# (file, a piece of the command) -> why. Strict: a fixed command makes its case fail until it
# leaves this list.
KNOWN_BROKEN: dict[tuple[str, str], str] = {}
ECHO = {"experiments/detection/run.sh": "DETECT_DIR",     # recipe -> the variable of its folder
        "experiments/external_validity/run.sh": "EV_DIR"}
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::(\d*))?(?::(\d*))?"$')
PLACEHOLDER = re.compile(r"<[^<>\n]*>|…")


@dataclass
class Command:
    source: str                       # doc file and line
    text: str
    env: dict[str, str] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)


def doc_lines(path: Path) -> list[tuple[str, str]]:
    """(where, line) of a doc, its ``--8<--`` includes expanded (mkdocs' pymdownx.snippets)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        found = SNIPPET.match(line.strip())
        if not found:
            out.append((f"{path.relative_to(ROOT)}:{number}", line))
            continue
        included = (ROOT / found[1]).read_text(encoding="utf-8").splitlines()
        start = int(found[2] or 1)
        end = int(found[3]) if found[3] else len(included)
        out += [(f"{found[1]}:{n}", text) for n, text in
                enumerate(included[start - 1:end], start)]
    return out


def collect() -> list[Command]:
    found: list[Command] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        inside, joined, where = False, "", ""
        for place, line in doc_lines(path):
            text = line.strip()
            if text.startswith("```"):
                inside = text == "```bash" and not inside
                continue
            if not inside or (not joined and (not text or text.startswith("#"))):
                continue
            joined, where = (f"{joined} {text}" if joined else text), where or place
            if joined.endswith("\\"):
                joined = joined[:-1].rstrip()
                continue
            parts = [joined] if joined.startswith("for ") else re.split(r"\s&&\s", joined)
            found += [Command(where, part.strip()) for part in parts]
            joined, where = "", ""
    previous: Command | None = None
    for command in found:
        words = shlex.split(PLACEHOLDER.sub("PLACEHOLDER", command.text), comments=True)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            key, value = words.pop(0).split("=", 1)
            command.env[key] = value
        if "..." in words:                 # "the arguments of the line above", as a reader takes it
            assert previous and previous.words[:1] == words[:1], f"{command.source}: ... of what?"
            at = words.index("...")
            words[at:at + 1] = previous.words[1:]
        command.words = words
        previous = command
    return found


COMMANDS = collect()


class StandIns:
    """Files and folders of each kind a documented command names, built once, on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, Path] = {}

    def get(self, kind: str) -> Path:
        if kind not in self.made:
            self.made[kind] = getattr(self, f"make_{kind}")(self.root / kind)
        return self.made[kind]

    def make_corpus(self, path: Path) -> Path:
        path.write_text("")                        # the spec checks the path; a run reads it
        return path

    def make_edos(self, path: Path) -> Path:
        return write_edos(path)

    def make_diasafety(self, path: Path) -> Path:
        return write_diasafety(path)

    def make_labelled(self, path: Path) -> Path:
        return write_labelled(path.with_suffix(".csv"))

    def make_cobia(self, path: Path) -> Path:
        from benevaudit.outputs.stand_in_files import write_files
        from benevaudit.probes.cobia.stand_in import stand_in_files
        return write_files(path, stand_in_files())

    def make_fairmt(self, path: Path) -> Path:
        from benevaudit.outputs.stand_in_files import write_files
        from benevaudit.probes.fairmt.stand_in import stand_in_files
        return write_files(path, stand_in_files())

    def make_folder(self, path: Path) -> Path:
        path.mkdir(parents=True)
        return path

    def make_run(self, path: Path) -> Path:
        """A training (and detect) run directory: saved config, model, checkpoints, lexicon,
        predictions, as train.py and detect.py leave them."""
        from hydra import compose, initialize_config_dir

        (path / ".hydra").mkdir(parents=True)
        with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
            config = compose("train")
        (path / ".hydra" / "config.yaml").write_text(OmegaConf.to_yaml(config))
        model = path / "model"
        model.mkdir()
        (model / "config.json").write_text('{"model_type": "bert"}')
        (model / "model.safetensors").write_bytes(b"")
        (model / "vocab.txt").write_text("[PAD]\n")
        (path / "checkpoints").mkdir()
        with zipfile.ZipFile(path / "checkpoints" / "last.ckpt", "w") as archive:
            archive.writestr("last/data.pkl", b"\x80\x04}\x94.")
        (path / "cue_lexicon.json").write_text(json.dumps(
            {"N": [{"word": "calm", "score": 1.0}], "OB": [], "BB": []}))
        (path / "predictions.csv").write_text("id,label,flagged\nd1,N,false\nd2,OB,true\n")
        import pandas as pd
        pd.DataFrame({"id": ["d1", "d2"], "label": ["N", "OB"], "flagged": [False, True]}
                     ).to_parquet(path / "predictions.parquet")
        (path / "metrics.json").write_text('{"test/macro_f1": 0.5}')
        return path

    def make_sheet(self, path: Path) -> Path:
        path = path.with_suffix(".csv")
        path.write_text("id,human_label\nd1,N\n")
        return path


def data_kind(cfg: Any, block: str) -> str:
    kind = OmegaConf.select(cfg, f"{block}.kind")
    family = OmegaConf.select(cfg, f"{block.rsplit('.', 1)[0]}.family")
    return str(family if block.endswith("probe.data") else kind)


def stand_in(key: str, value: str, cfg: Any, made: StandIns) -> str | None:
    """The stand-in for ``key=value`` in the composed ``cfg``; None: keep the value."""
    run = made.get("run")
    if key.endswith("data.path"):
        kind = data_kind(cfg, key[: -len(".path")])
        path = {"corpus": "corpus", "edos": "edos", "diasafety": "diasafety",
                "labelled": "labelled", "cobia": "cobia", "fairmt": "fairmt",
                "inspect_log": "folder"}[kind]
        return str(made.get(path))
    if key == "ckpt":
        return str(run / "checkpoints" / "last.ckpt") if value.endswith(".ckpt") else str(run)
    if key == "lexicon.path":
        return str(run / "cue_lexicon.json")
    if key == "predictions.path":
        return str(run / ("predictions.parquet" if value.endswith(".parquet")
                          else "predictions.csv"))
    if key in ("flips.with", "flips.without"):
        return str(run)
    if key == "runs":
        return f"[{run},{run}]" if value.startswith("[") else str(run)
    if key == "probe.answers.path":
        return None if (ROOT / value).is_file() else str(made.get("folder"))
    if key in ("annotation.labels_path", "probe.human_labels"):
        return str(made.get("sheet"))
    if key == "model.source" and value.startswith(("/", "~", ".")):
        return str(run / "model")
    if key in ("hydra.run.dir", "hydra.sweep.dir"):
        return str(made.root / "hydra" / key)
    return None


def check_entrypoint(words: list[str], made: StandIns) -> None:
    from benevaudit.pipelines.config import validated

    name = Path(words[0]).stem
    assert (ROOT / f"{name}.py").is_file() and name in RUNS, f"no entrypoint {words[0]}"
    args = [w for w in words[1:]]
    paths = [f"paths.root_dir={made.root}", f"paths.output_dir={made.root / 'out'}"]
    first = jobs([f"{name}.py", *args, *paths])[0]       # the blocks' kinds, as written
    fixed = []
    for arg in args:
        key, _, value = arg.partition("=")
        replaced = stand_in(key.lstrip("+~"), value, first, made) if value else None
        fixed.append(f"{key}={replaced}" if replaced is not None else arg)
    spec = getattr(importlib.import_module(f"benevaudit.pipelines.{name}"), RUNS[name])
    for cfg in jobs([f"{name}.py", *fixed, *paths]):
        validated(spec, cfg)


def check_script(words: list[str]) -> None:
    path = ROOT / words[0]
    assert path.is_file(), f"no script {words[0]}"
    text = path.read_text(encoding="utf-8")
    compile(text, str(path), "exec")
    for flag in (w.split("=")[0] for w in words[1:] if w.startswith("--")):
        assert f'"{flag}"' in text or f"'{flag}'" in text, f"{words[0]} defines no {flag}"


def check_make(words: list[str]) -> None:
    targets = set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", (ROOT / "Makefile").read_text(),
                             re.M))
    for target in (w for w in words[1:] if "=" not in w):
        assert target in targets, f"the Makefile has no target {target}"


def check_recipe(command: Command, made: StandIns) -> None:
    direct = command.words[0] != "bash"
    script = command.words[0] if direct else command.words[1]
    path = ROOT / script
    assert path.is_file(), f"no recipe {script}"
    assert not direct or os.access(path, os.X_OK), f"{script} is not executable"
    parsed = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr
    if script not in ECHO:
        return
    env = {**os.environ, **command.env, "ECHO_ONLY": "1", ECHO[script]: str(made.root / "echo")}
    for name in ("CLASSIFIER", "FINETUNED"):
        if name in env:
            env[name] = str(made.get("run"))
    for name, kind in (("EDOS", "edos"), ("DIASAFETY", "diasafety"), ("CORPUS", "corpus")):
        if name in command.env:
            env[name] = str(made.get(kind))
    args = [w for w in command.words[1 if direct else 2:] if "PLACEHOLDER" not in w]
    done = subprocess.run([str(path), *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = [shlex.split(line) for line in done.stdout.splitlines()
               if line.startswith(PYTHONS) and ".py" in line.split()[1]]
    assert printed, f"{script} printed no command:\n{done.stdout[-2000:]}"
    if "ECHO_ONLY" in command.env:         # the docs only print them: shown, not run
        return
    for words in printed:
        if Path(words[1]).stem in RUNS:
            check_entrypoint(words[1:], made)


def kind_of(command: Command) -> str:
    words = command.words
    if not words:
        return "empty"
    if words[0] in PYTHONS and len(words) > 1 and words[1].endswith(".py"):
        return "entrypoint" if "/" not in words[1] else "script"
    if words[0] == "make":
        return "make"
    if words[0].endswith(".sh") or (words[0] == "bash" and words[1].endswith(".sh")):
        return "recipe"
    if any(command.text.startswith(prefix) for prefix in ALLOWED):
        return "allowed"
    return "unknown"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> StandIns:
    return StandIns(tmp_path_factory.mktemp("stand_ins"))


def test_the_docs_show_commands_of_every_kind() -> None:
    kinds = [kind_of(c) for c in COMMANDS]
    assert len(COMMANDS) > 100 and {"entrypoint", "script", "make", "recipe", "allowed"} <= \
        set(kinds)
    unknown = [f"{c.source}: {c.text}" for c, k in zip(COMMANDS, kinds) if k in ("unknown",
                                                                                  "empty")]
    assert not unknown, f"commands the test cannot check (add a kind or an ALLOWED reason): {unknown}"


def broken(command: Command) -> str | None:
    return next((why for (path, piece), why in KNOWN_BROKEN.items()
                 if command.source.startswith(path) and piece in command.text), None)


CASES = [pytest.param(c, id=c.source, marks=pytest.mark.xfail(strict=True, reason=broken(c)))
         if broken(c) else pytest.param(c, id=c.source) for c in COMMANDS]


@pytest.mark.parametrize("command", CASES)
def test_every_command_in_the_docs(command: Command, made: StandIns) -> None:
    kind = kind_of(command)
    if kind == "entrypoint":
        check_entrypoint(command.words[1:], made)
    elif kind == "script":
        check_script(command.words[1:])
    elif kind == "make":
        check_make(command.words)
    elif kind == "recipe":
        check_recipe(command, made)
    else:
        assert kind == "allowed", f"{command.source}: no check for {command.text!r}"


def test_the_check_fails_on_a_misspelt_key(made: StandIns) -> None:
    with pytest.raises(Exception, match="lr"):
        check_entrypoint(["train.py", "optim.lr=-1"], made)
    with pytest.raises(Exception):
        check_entrypoint(["probe.py", "probe=cobia_hccc"], made)
    with pytest.raises(AssertionError, match="no target"):
        check_make(["make", "docs-nowhere"])


def test_includes_are_expanded() -> None:
    sources = {c.source.split(":")[0] for c in COMMANDS}
    assert "experiments/detection/README.md" in sources
    assert "experiments/cobia/README.md" in sources


@pytest.mark.slow
def test_the_own_predictions_example_runs(tmp_path) -> None:
    """The Bring-your-own-data page's pair, as a user types it, in an empty folder."""
    block = [c for c in COMMANDS if c.source.startswith("docs/howto/own-data.md")
             and c.text.startswith(("printf", "python detect.py detector=external"))][:2]
    assert [c.text.split()[0] for c in block] == ["printf", "python"]
    script = f"{block[0].text}\n{sys.executable} {ROOT / 'detect.py'} {block[1].text.split(' ', 2)[2]}"
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "WANDB_MODE": "offline"})
    assert done.returncode == 0, done.stderr[-3000:]
    (metrics,) = tmp_path.glob("outputs/detect/runs/*/metrics.json")
    values = json.loads(metrics.read_text())
    assert values["trigger/TR_OB"] == 1.0 and values["trigger/TR_BB"] == 0.0
