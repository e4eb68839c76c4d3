"""One registry pattern for every pluggable family (``benevaudit.registry``): a kind registers
its spec and its builder in one call, a kind defined twice or unknown is refused, and the tagged
union of the registered specs validates a block.

For each family (LLM backend, detector kind, guard, probe) a new kind is one module in a
package outside benevaudit (``tmp_path`` on ``sys.path``) and one YAML in a config folder on
Hydra's search path; the kind is composed, validated, built and run through the family's own
entry point, with a known answer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benevaudit.detectors import build_detector
from benevaudit.detectors.guards import GUARD_FORMATS, GUARD_KINDS
from benevaudit.detectors.registry import DETECTORS
from benevaudit.errors import ConfigError
from benevaudit.llm import BACKENDS, Sampling, build_from_block
from benevaudit.llm.spec import llm_spec
from benevaudit.probes.base import PROBES, RunSettings
from benevaudit.probes.registry import build, probes
from benevaudit.probes.spec import TargetSpec
from benevaudit.registry import Registry, RegistryError, UnknownKind
from benevaudit.schema import Dialogue, Turn
from benevaudit.specs import Spec

CONF = Path(__file__).resolve().parents[1] / "conf"


# ---- the mechanism ------------------------------------------------------------------------

class Small(Spec):
    kind: Literal["small"]
    size: int


class Large(Spec):
    kind: Literal["large"]
    size: int
    extra: str


def test_one_call_registers_spec_and_builder_and_the_union_picks_the_spec() -> None:
    sizes: Registry[Any] = Registry("size kind")
    sizes.add("small", Small, lambda spec: spec.size)

    @sizes.register("large", Large)
    def large(spec: Large) -> int:
        return spec.size * 10

    assert list(sizes) == ["small", "large"] and sizes["large"] is large
    block = sizes.validate({"kind": "large", "size": 3, "extra": "x"}, "thing")
    assert isinstance(block, Large) and sizes[block.kind](block) == 30
    with pytest.raises(ConfigError, match=r"thing.kind='huge': expected one of \['small', "
                                          r"'large'\]"):
        sizes.validate({"kind": "huge", "size": 1}, "thing")
    with pytest.raises(ConfigError, match=r"thing.extra: unknown key in thing \(kind=small\); "
                                          r"valid keys: kind, size"):   # its own keys only
        sizes.validate({"kind": "small", "size": 1, "extra": "x"}, "thing")


def test_a_kind_defined_twice_and_an_unknown_kind_are_refused_by_name() -> None:
    sizes: Registry[Any] = Registry("size kind")
    sizes.add("small", Small, "builtins:len", origin="pkg.one")
    sizes.add("small", Small, "builtins:len", origin="pkg.one")       # a reload: same module
    with pytest.raises(RegistryError, match=r"size kind 'small' is defined twice: in pkg.one "
                                            r"and pkg.two"):
        sizes.add("small", Small, "builtins:abs", origin="pkg.two")
    assert sizes["small"] is len                        # a "module:attr" builder, imported now
    with pytest.raises(UnknownKind, match=r"unknown size kind 'tiny'; known: \['small'\]"):
        sizes["tiny"]
    assert "tiny" not in sizes and "small" in sizes


def test_a_lazy_builder_is_imported_only_when_built() -> None:
    """Listing the backends and validating a vllm block leave vLLM's module unread."""
    entry = BACKENDS.entry("vllm")
    assert entry.target == "benevaudit.llm.vllm:VLLMChatModel"
    assert entry.spec_class() is type(llm_spec({"backend": "vllm", "model": "m"}))
    code = ("import sys; from benevaudit.llm import BACKENDS, llm_spec; list(BACKENDS); "
            "llm_spec({'backend': 'vllm', 'model': 'm'}); "
            "print('benevaudit.llm.vllm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- a plugin package per family -----------------------------------------------------------

def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty plugin package ``plugs_<n>`` on ``sys.path``, and a config folder for Hydra;
    every registry forgets the package afterwards."""
    package = tmp_path / f"plugs_{tmp_path.name.replace('-', '_')}"
    write(package, "__init__.py", "")
    # sys.path set directly: syspath_prepend calls pkg_resources, which another test may shim
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    yield package
    for registry in (BACKENDS, DETECTORS, GUARD_FORMATS, PROBES):
        registry.exclude(package.name)
    probes.cache_clear()


def composed(primary: str, conf: Path, *overrides: str) -> Any:
    """``primary`` composed with ``conf`` on Hydra's search path."""
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose(primary, overrides=[f"hydra.searchpath=[file://{conf}]", *overrides])


def block(cfg: Any, key: str) -> dict[str, Any]:
    """The block at ``key``, its interpolations resolved."""
    out = OmegaConf.to_container(cfg[key], resolve=True)
    assert isinstance(out, dict)
    return {str(k): v for k, v in out.items()}


def dialogue(did: str, *agent: str) -> Dialogue:
    turns = [t for text in agent for t in (Turn("user", "I need help."), Turn("agent", text))]
    return Dialogue(did, "N", "mental_health", "scripted", {"age": "young", "gender": "male",
                    "race": "White", "ability": "none"}, None, tuple(turns))


ECHO_BACKEND = '''
from typing import Literal, Optional

import numpy as np

from benevaudit.llm.backend_specs import Closed
from benevaudit.llm.base import ChatModel, Completion
from benevaudit.llm.registry import BACKENDS


class EchoSpec(Closed):
    backend: Literal["echo"]
    prefix: Optional[str] = None


class EchoChatModel(ChatModel):
    name = "echo"

    def __init__(self, model: str = "echo", prefix: str = "") -> None:
        self.model_id, self.prefix = model, prefix

    def chat(self, conversations, sampling):
        return [Completion(self.prefix + c[-1]["content"].upper(), "stop", 1, 1)
                for c in conversations]

    def score(self, conversations, choices):
        return np.zeros((len(conversations), len(choices)))


BACKENDS.add("echo", EchoSpec, EchoChatModel)
'''


def test_a_new_llm_backend_is_one_module_and_one_yaml(plugins: Path) -> None:
    write(plugins, "echo.py", ECHO_BACKEND)
    write(plugins.parent / "conf" / "llm", "echo.yaml", """\
        # LLM backend `echo`: replies with the last message in capitals, after a prefix.
        backend: echo
        model: echo
        prefix: "echo: "
        cache: null
        """)
    assert "echo" not in BACKENDS
    BACKENDS.include(plugins.name)
    assert list(BACKENDS)[-1] == "echo" and {"hf", "vllm", "openai", "scripted"} < set(BACKENDS)
    llm = block(composed("probe", plugins.parent / "conf", "+llm=echo"), "llm")
    assert type(llm_spec(llm)).__name__ == "EchoSpec"
    model = build_from_block(llm)
    replies = model.chat([[{"role": "user", "content": "hello"}]], Sampling(max_tokens=4))
    assert [r.text for r in replies] == ["echo: HELLO"]
    with pytest.raises(ConfigError, match=r"llm.colour"):     # its spec's keys, and no others
        llm_spec({**llm, "colour": "red"})
    BACKENDS.exclude(plugins.name)
    with pytest.raises(ConfigError, match=r"llm.backend='echo': expected one of \['hf', 'vllm', "
                                          r"'openai', 'scripted', 'null'\]"):
        build_from_block(llm)


LONG_TURNS = '''
from typing import Literal

from benevaudit.detectors.base import Detector, UnitVerdict
from benevaudit.detectors.registry import DETECTORS, DetectorKind
from benevaudit.detectors.spec import DecidingSpec
from benevaudit.specs import PositiveInt


class LongTurnsSpec(DecidingSpec):
    kind: Literal["long_turns"]
    max_words: PositiveInt


class LongTurns(Detector):
    """Flags an agent turn longer than ``max_words`` words."""

    def __init__(self, spec):
        self.name, self.unit, self.aggregation = spec.name, spec.unit, spec.aggregation
        self.max_words = spec.max_words

    def score_units(self, units):
        words = [len(u.turns[-1].text.split()) for u in units]
        return [UnitVerdict(float(n > self.max_words), n > self.max_words) for n in words]


def record(spec, context, dialogues, request_log):
    """No model: nothing to record."""


DETECTORS.add("long_turns", LongTurnsSpec, DetectorKind(lambda spec, context: LongTurns(spec),
                                                        record))
'''


def test_a_new_detector_kind_is_one_module_and_one_yaml(plugins: Path) -> None:
    write(plugins, "long_turns.py", LONG_TURNS)
    write(plugins.parent / "conf" / "detector", "long_turns.yaml", """\
        # Flags a dialogue whose agent writes a turn of more than max_words words.
        name: long_turns
        kind: long_turns
        unit: utterance
        aggregation: any
        max_words: 5
        """)
    DETECTORS.include(plugins.name)
    detector_block = block(composed("detect", plugins.parent / "conf", "detector=long_turns"),
                           "detector")
    spec = DETECTORS.validate(detector_block, "detector")
    detector = build_detector(spec)
    short = dialogue("d1", "Fine.", "Sure thing.")
    long = dialogue("d2", "Fine.", "one two three four five six")
    results = detector.detect([short, long])
    assert [r.flagged for r in results] == [False, True]
    assert results[1].unit_flags == [False, True]
    with pytest.raises(ConfigError, match=r"detector.max_words=0: expected"):
        DETECTORS.validate({**detector_block, "max_words": 0}, "detector")


SHOUTY_GUARD = '''
from typing import Literal

from benevaudit.detectors.guards.base import GuardFormat
from benevaudit.detectors.spec import GuardSpec


class ShoutySpec(GuardSpec):
    kind: Literal["shouty_guard"]


def prompt(turns):
    return [{"role": "user", "content": "Is this reply shouting? " + turns[-1].text}]


def parse(text):
    word = text.strip().lower()
    return {"shouting": True, "calm": False}.get(word)


FORMAT = GuardFormat("shouty_guard", prompt, ("shouting", "calm"), parse, spec=ShoutySpec)
'''


def test_a_new_guard_is_one_module_and_one_yaml(plugins: Path) -> None:
    write(plugins, "shouty_guard.py", SHOUTY_GUARD)
    write(plugins.parent / "conf" / "detector", "shouty_guard.yaml", """\
        # A guard that asks whether an agent turn shouts; generated verdict, shouting or calm.
        defaults:
          - base/guard@_here_
          - _self_

        name: shouty_guard
        kind: shouty_guard
        checkpoint: shouty
        unit: utterance
        mode: generate
        max_tokens: 4
        trigger: shouting
        categories: false
        """)
    GUARD_FORMATS.include(plugins.name)
    assert "shouty_guard" in DETECTORS and "shouty_guard" not in GUARD_KINDS   # shipped only
    cfg = composed("detect", plugins.parent / "conf", "detector=shouty_guard",
                   "detector.llm.backend=scripted",
                   "+detector.llm.responses=[calm,shouting,calm,calm]")
    spec = DETECTORS.validate(block(cfg, "detector"), "detector")
    assert type(spec).__name__ == "ShoutySpec"
    detector = build_detector(spec)
    results = detector.detect([dialogue("d1", "Hello.", "STOP IT."), dialogue("d2", "Hi.", "Ok.")])
    assert [r.flagged for r in results] == [True, False]
    assert results[0].unit_flags == [False, True]


ECHO_PROBE = '''
from typing import Literal

from benevaudit.llm import Sampling
from benevaudit.probes.base import Collected, Probe, ProbeResult
from benevaudit.specs import Spec


class AskSpec(Spec):
    family: Literal["ask_twice"]
    question: str


class AskTwice(Probe[AskSpec]):
    """Asks the target one question twice; scores how often it answered the same."""

    family = "ask_twice"

    def collect(self, target, settings, models):
        model = models.get(target.llm)
        question = [{"role": "user", "content": self.spec.question}]
        replies = model.chat([question, question + [{"role": "assistant", "content": "?"},
                                                    question[0]]], Sampling(max_tokens=8))
        return Collected([{"reply": r.text} for r in replies], None, target)

    def score(self, collected, settings):
        texts = [row["reply"] for row in collected.rows]
        return ProbeResult(collected.rows, {"ask_twice/same": float(len(set(texts)) == 1)})
'''


def test_a_new_probe_is_one_module_and_one_yaml(plugins: Path, tmp_path: Path) -> None:
    write(plugins, "ask_twice.py", ECHO_PROBE)
    write(plugins.parent / "conf" / "probe", "ask_twice.yaml", """\
        # Asks the target one question twice and reports whether both replies agree.
        family: ask_twice
        question: Are you sure?
        """)
    PROBES.include(plugins.name)
    probes.cache_clear()
    assert ("ask_twice", None) in probes() and ("cobia", None) in probes()
    cfg = composed("probe", plugins.parent / "conf", "probe=ask_twice",
                   "target.llm.backend=scripted", "+target.llm.responses=[yes,yes]")
    spec = PROBES.validate(block(cfg, "probe"), "probe")
    probe = build(spec)
    target = TargetSpec.of(block(cfg, "target"), "target")
    result = probe.run(target, RunSettings(run_dir=tmp_path, seed=0))
    assert result.rows == [{"reply": "yes"}, {"reply": "yes"}]
    assert result.metrics == {"ask_twice/same": 1.0}
    with pytest.raises(ConfigError, match=r"probe.question is required"):
        PROBES.validate({"family": "ask_twice"}, "probe")
