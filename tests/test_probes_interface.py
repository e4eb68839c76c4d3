"""The probe interface: the registry maps ``probe.family``/``probe.kind`` to one class each,
``batched_chat`` keeps request order across chunks, and CoBia's guard rater builds the same
Granite Guardian 3.3 prompt as the guard detector."""

from pathlib import Path
from typing import Literal

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benevaudit.errors import ConfigError
from benevaudit.llm import Sampling
from benevaudit.llm.batched import batched_chat
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.probes.cobia.probe import CoBia
from benevaudit.probes.fairdialogue.decision import Decision
from benevaudit.probes.fairdialogue.feedback import Feedback
from benevaudit.probes.fairdialogue.recommendation import Recommendation
from benevaudit.probes.fairmt.probe import FairMT
from benevaudit.probes.base import RunSettings
from benevaudit.probes.registry import ProbeSpec, build
from benevaudit.probes.spec import TargetSpec
from benevaudit.specs import Spec

CONF = Path(__file__).resolve().parents[1] / "conf"


class Toy(Spec):
    """A kind's spec that the shipped union lacks (a new module's)."""

    family: Literal["toy"]


@pytest.mark.parametrize("option, cls", [
    ("cobia", CoBia), ("cobia_hcc", CoBia), ("cobia_paper", CoBia),
    ("fairdialogue_decision", Decision), ("fairdialogue_recommendation", Recommendation),
    ("fairdialogue_feedback", Feedback), ("fairmt", FairMT), ("fairmt_paper", FairMT)])
def test_every_probe_option_builds_its_probe(option, cls):
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=[f"probe={option}"])
    block = OmegaConf.to_container(cfg.probe, resolve=True)
    spec = Probed.of({"probe": block}).probe
    probe = build(spec)
    assert type(probe) is cls and probe.spec is spec


class Probed(Spec):
    probe: ProbeSpec


def test_an_unknown_family_or_kind_lists_the_valid_ones():
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=["probe=fairdialogue_decision"])
    block = OmegaConf.to_container(cfg.probe, resolve=True)
    with pytest.raises(ConfigError, match=r"probe.family='nope': expected one of \['cobia', "
                                          r"'fairdialogue', 'fairmt'\]"):
        Probed.of({"probe": {**block, "family": "nope"}})
    with pytest.raises(ConfigError, match=r"probe.kind='vote': expected one of \['decision', "
                                          r"'feedback', 'recommendation'\]"):
        Probed.of({"probe": {**block, "kind": "vote"}})


def test_a_spec_no_module_implements_names_the_implemented_ones():
    with pytest.raises(ConfigError, match=r"probe toy/None: no probe module implements it; "
                                          r"implemented: \['cobia/None', "):
        build(Toy(family="toy"))


def test_the_registry_is_read_from_the_modules(tmp_path, monkeypatch):
    """The five shipped kinds, and a new module under probes/ is a new kind with no other edit."""
    import benevaudit.probes as package
    from benevaudit.probes.registry import probes

    assert probes() == {("cobia", None): CoBia, ("fairdialogue", "decision"): Decision,
                        ("fairdialogue", "feedback"): Feedback,
                        ("fairdialogue", "recommendation"): Recommendation,
                        ("fairmt", None): FairMT}
    (tmp_path / "toy_probe.py").write_text(
        "from benevaudit.probes.base import Collected, Probe, ProbeResult\n\n"
        "class Toy(Probe):\n    family = 'toy'\n\n"
        "    def collect(self, target, settings, models):\n"
        "        return Collected([{'reply': target.name}], None, target)\n\n"
        "    def score(self, collected, settings):\n"
        "        return ProbeResult(collected.rows, {'toy/n': len(collected.rows)})\n")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    probes.cache_clear()
    try:
        toy = build(Toy(family="toy"))
        assert type(toy).__name__ == "Toy" and type(toy).__module__ == "benevaudit.probes.toy_probe"
        target = TargetSpec.of({"name": "m1", "company": None, "model_company": None,
                                "llm": {"backend": "scripted", "responses": ["ok"]}})
        result = toy.run(target,
                         RunSettings(run_dir=tmp_path, seed=0))
        assert result.rows == [{"reply": "m1"}] and result.metrics == {"toy/n": 1}
    finally:
        probes.cache_clear()
    monkeypatch.undo()
    assert ("toy", None) not in probes()     # gone with its folder


class CountingModel(ScriptedChatModel):
    """Replies with the request's index, and records how many requests each call held."""

    def __init__(self) -> None:
        super().__init__(lambda conv, sampling: conv[-1]["content"])
        self.calls: list[int] = []

    def chat(self, conversations, sampling):
        self.calls.append(len(conversations))
        return super().chat(conversations, sampling)


def test_batched_chat_sends_chunks_and_keeps_the_order():
    model = CountingModel()
    convs = [[{"role": "user", "content": str(i)}] for i in range(7)]
    replies = batched_chat(model, convs, Sampling(max_tokens=4), chunk=3)
    assert [r.text for r in replies] == [str(i) for i in range(7)]
    assert model.calls == [3, 3, 1]
    assert batched_chat(model, [], Sampling(max_tokens=4)) == [] and model.calls == [3, 3, 1]


def test_batched_chat_sends_identical_conversations_once_and_answers_each():
    model = CountingModel()
    convs = [[{"role": "user", "content": str(i % 3)}] for i in range(7)]   # 0 1 2 0 1 2 0
    replies = batched_chat(model, convs, Sampling(max_tokens=4), chunk=2)
    assert [r.text for r in replies] == [str(i % 3) for i in range(7)]
    assert model.calls == [2, 1]                     # three distinct requests, two chunks


def test_the_guard_rater_and_the_guard_detector_share_granite_guardians_prompt():
    from benevaudit.detectors.guards.granite_guardian33 import FORMAT
    from benevaudit.llm.granite_guardian import granite_guardian_prompt
    from benevaudit.schema import Turn

    turns = [Turn("user", "Why are they lazy?"), Turn("agent", "They are not.")]
    assert FORMAT.prompt is granite_guardian_prompt          # one definition, not two copies
    for criteria in ("social_bias", "harm", "a custom criterion"):
        assert FORMAT.prompt(turns, criteria) == granite_guardian_prompt(turns, criteria)
