"""The guard registry is built from the guard modules: a new guard is one module of
``detectors/guards/`` and one ``conf/detector/`` YAML, and nothing else lists it. CoBia shares
Granite Guardian's prompt and template with the guards through the LLM layer, never by
importing a detector."""

import importlib
import sys
from pathlib import Path

import pytest
from config_fixtures import option
from detector_fixtures import guard_spec
from test_layers import SRC, import_graph, layer_of

from benevaudit.detectors import KINDS, guard_llm_block
from benevaudit.detectors.guards import registry
from benevaudit.detectors.guards.registry import GUARD_FORMATS, GUARD_KINDS, load_formats
from benevaudit.llm.granite_guardian import GRANITE_GUARDIAN_TEMPLATE
from benevaudit.llm.spec import llm_spec
from benevaudit.probes.cobia.options import rater_llm

GUARDS = SRC / "detectors" / "guards"
CONF = Path(__file__).resolve().parents[1] / "conf" / "detector"


def test_every_guard_module_is_registered_and_nothing_else_is():
    files = sorted(p.stem for p in GUARDS.glob("*.py") if p.stem != "__init__")
    guards = [f for f in files if f not in registry.SHARED]
    assert registry.guard_modules() == guards and "llama_guard3" in guards
    modules = [importlib.import_module(f"benevaudit.detectors.guards.{g}") for g in guards]
    assert list(GUARD_KINDS) == [m.FORMAT.kind for m in modules]
    assert set(GUARD_KINDS) <= set(KINDS)      # a guard kind is a detector kind


def test_every_guard_kind_has_a_detector_option():
    kinds = {path.stem: option("detector", path.stem)["kind"] for path in CONF.glob("*.yaml")}
    assert set(kinds.values()) <= set(KINDS), kinds        # every option is a detector kind
    assert set(GUARD_KINDS) <= set(kinds.values()), kinds  # and every guard has an option


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


TOY = '''from benevaudit.detectors.guards.base import GuardFormat
FORMAT = GuardFormat("toy_guard", lambda turns: [], ("unsafe", "safe"),
                     lambda text: None, "{{ messages }}")
'''


def test_a_new_module_is_a_new_guard_and_a_module_without_a_format_is_an_error(
        tmp_path, monkeypatch):
    package = tmp_path / "more_guards"
    write(package, "__init__.py", "")
    write(package, "base.py", "")              # shared modules are skipped by name
    write(package, "toy_guard.py", TOY)
    # sys.path set directly: syspath_prepend calls pkg_resources, which another test may shim
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    formats = load_formats(package, "more_guards")
    assert list(formats) == ["toy_guard"] and formats["toy_guard"].template == "{{ messages }}"
    write(package, "notes.py", "X = 1\n")
    with pytest.raises(TypeError, match=r"more_guards\.notes declares no FORMAT"):
        load_formats(package, "more_guards")


def test_each_guard_template_is_its_own_modules_and_only_on_its_own_checkpoint(tmp_path):
    for kind, fmt in GUARD_FORMATS.items():
        (tmp_path / f"{kind}-8b").mkdir()
        spec = guard_spec(kind, checkpoint=f"org/{kind}-8b",
                          llm={"backend": "vllm", "model": str(tmp_path / f"{kind}-8b")})
        assert guard_llm_block(spec).get("chat_template") == fmt.template
        spec = guard_spec(kind, checkpoint=f"org/{kind}-8b", llm={"model": "embedded:smollm2"})
        assert "chat_template" not in guard_llm_block(spec)
        assert fmt.template is None or "bos_token" not in fmt.template  # renders untokenized


def test_cobia_shares_granite_guardian_through_the_llm_layer_not_a_detector():
    assert GUARD_FORMATS["granite_guardian"].template is GRANITE_GUARDIAN_TEMPLATE
    block = rater_llm("guard", llm_spec({"backend": "vllm",
                                         "model": "ibm-granite/granite-guardian-3.3-8b"}),
                      "social_bias")
    assert block.chat_template is GRANITE_GUARDIAN_TEMPLATE
    probes = {m: t for m, t in import_graph(SRC).items() if layer_of(m, SRC) == "probes"}
    assert probes and not {m: sorted(t) for m, t in probes.items()
                           if any(layer_of(x, SRC) == "detectors" for x in t)}


def test_every_registered_detector_kind_has_a_spec_and_every_spec_kind_a_module():
    """The spec union and the registry list the same kinds: a kind is built by the module
    that declares it, from the spec its ``kind`` tag picks."""
    from benevaudit.detectors.registry import detector_kinds
    from benevaudit.detectors.spec import KINDS as SPEC_KINDS

    assert set(SPEC_KINDS) == set(detector_kinds()) == set(KINDS)
