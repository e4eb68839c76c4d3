"""Closed specs: an ``llm`` block takes its backend's keys only, ``probe.audio`` its source's,
an intervention step its own parameters; each refusal names the key. A run's interventions are
built once, from one read of the cue lexicon."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from benevaudit.audit.interventions import INTERVENTIONS
from benevaudit.audit.interventions.steps import STEP_SPECS
from benevaudit.audit.lexicon import Lexicon
from benevaudit.outputs.predictions import save_lexicon
from benevaudit.errors import ConfigError
from benevaudit.llm import BACKENDS, llm_spec
from benevaudit.llm.backend_specs import BACKEND_SPECS, KEYS_OF, HFSpec, ScriptedSpec
from benevaudit.llm.spec import SamplingSpec
from benevaudit.pipelines.config import validated
from benevaudit.probes.spec import AudioSpec
from benevaudit.schema import Dialogue, Turn

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"


def compose_cfg(name: str, tmp: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(name, overrides=[f"paths.root_dir={tmp}",
                                        f"paths.output_dir={tmp / 'run'}", *overrides])


def refusal(name: str, tmp: Path, *overrides: str) -> str:
    from benevaudit.pipelines.detect import DetectRun
    from benevaudit.pipelines.probe import ProbeRun

    spec = {"probe": ProbeRun, "detect": DetectRun}[name]
    with pytest.raises(ConfigError) as caught:
        validated(spec, compose_cfg(name, tmp, *overrides))
    return str(caught.value)


# ---- llm blocks ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["text", "audio"])
def test_an_hf_target_refuses_a_base_url_in_either_mode(tmp_path, mode) -> None:
    message = refusal("probe", tmp_path, "probe=fairdialogue_decision", f"probe.mode={mode}",
                      "+target.llm.base_url=http://127.0.0.1:8000/v1")
    assert message.startswith("target.llm.base_url: the hf backend takes no base_url (keys of "
                              "openai); drop it (~target.llm.base_url) or set it to null")
    assert "target.llm.backend=openai" in message and "\n" not in message


def test_an_openai_judge_refuses_the_hf_device_it_kept(tmp_path) -> None:
    message = refusal("probe", tmp_path, "probe=fairmt", "probe.judge.llm.backend=openai")
    assert message.startswith("probe.judge.llm.device: the openai backend takes no device "
                              "(keys of hf)")


def test_a_misspelt_key_is_refused_with_the_backends_keys(tmp_path) -> None:
    message = refusal("probe", tmp_path, "probe=fairmt", "+target.llm.devise=cpu")
    assert message.startswith("target.llm.devise: unknown key in target.llm (backend=hf); "
                              "valid keys: audio_in, audio_out, backend, batch_size, cache,")
    assert "base_url" not in message and "gpu_memory_utilization" not in message


def test_the_entrypoint_prints_the_refusal_as_one_line(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "probe.py"), "probe=fairdialogue_decision", "logger=none",
         "+target.llm.base_url=http://x/v1", f"hydra.run.dir={tmp_path / 'run'}",
         f"paths.root_dir={tmp_path}"], capture_output=True, text=True, cwd=tmp_path,
        timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")]
    assert lines == ["error: target.llm.base_url: the hf backend takes no base_url (keys of "
                     "openai); drop it (~target.llm.base_url) or set it to null, or run the "
                     "block on openai (target.llm.backend=openai)"], proc.stderr


def test_null_keys_of_another_backend_let_a_block_serve_it(tmp_path) -> None:
    """A guard's vLLM block runs on hf by its backend alone (its vLLM keys are null)."""
    from benevaudit.pipelines.detect import DetectRun

    cfg = compose_cfg("detect", tmp_path, "detector=llama_guard3", "detector.llm.backend=hf",
                      "detector.llm.model=embedded:smollm2")
    llm = validated(DetectRun, cfg).detector.llm
    assert isinstance(llm, HFSpec) and llm.max_model_len == 8192
    assert "gpu_memory_utilization" not in llm.constructor_kwargs()
    message = refusal("detect", tmp_path, "detector=llama_guard3", "detector.llm.backend=hf",
                      "detector.llm.gpu_memory_utilization=0.5")
    assert message.startswith("detector.llm.gpu_memory_utilization: the hf backend takes no "
                              "gpu_memory_utilization (keys of vllm)")


def test_scripted_stands_in_for_any_block_and_ignores_its_keys() -> None:
    block = llm_spec({"backend": "scripted", "device": "auto", "batch_size": 8,
                      "base_url": "http://x", "responses": ["Yes."]})
    assert isinstance(block, ScriptedSpec)
    assert block.constructor_kwargs() == {"responses": ["Yes."]}
    with pytest.raises(ConfigError, match=r"^llm\.devise: unknown key in llm \(backend=scripted"):
        llm_spec({"backend": "scripted", "devise": "auto"})


def test_a_judge_override_naming_another_backend_drops_the_replaced_backends_keys() -> None:
    study = llm_spec({"backend": "vllm", "model": "m", "max_model_len": 8192,
                      "gpu_memory_utilization": 0.9, "cache": None})
    merged = study.overridden({"backend": "hf", "model": "embedded:smollm2"})
    assert merged == {"backend": "hf", "model": "embedded:smollm2", "max_model_len": 8192,
                      "cache": None}
    assert isinstance(llm_spec(merged), HFSpec)
    # the same backend keeps the block's own keys under the override
    assert study.overridden({"max_model_len": 4096})["gpu_memory_utilization"] == 0.9
    # a judge detector's unset block takes every backend's keys: null ones override nothing
    override = llm_spec({"backend": None, "device": None, "gpu_memory_utilization": None})
    assert override.backend is None and override.model_dump(exclude_none=True) == {}


def test_every_backend_key_belongs_to_a_backend_spec_and_its_constructor() -> None:
    """The keys a backend spec lists are its constructor's (hf: the text or speech model's;
    vllm: engine arguments beside), so none is dropped unseen."""
    import inspect

    from benevaudit.llm.registry import backend_class

    for name in ("hf", "openai", "scripted"):
        params = set(inspect.signature(backend_class(name).__init__).parameters)
        if name == "hf":
            params |= set(inspect.signature(backend_class(name, True).__init__).parameters)
        spec = BACKEND_SPECS[name]
        own = set(spec.model_fields) - {"backend", "cache", "audio_in"} - spec.not_passed
        assert own <= params, (name, sorted(own - params))
    assert KEYS_OF["base_url"] == ["openai"] and KEYS_OF["chat_template"] == ["hf", "vllm"]
    assert set(BACKEND_SPECS) == set(BACKENDS)       # one spec per registered backend


# ---- probe.audio ----------------------------------------------------------------------------
def audio(tmp: Path, *overrides: str) -> AudioSpec:
    from benevaudit.pipelines.probe import ProbeRun

    cfg = compose_cfg("probe", tmp, "probe=fairdialogue_decision", "probe.mode=audio",
                      "target=qwen25_omni_7b", *overrides)
    return validated(ProbeRun, cfg).probe.audio


def test_an_espeak_voice_is_closed(tmp_path) -> None:
    spec = audio(tmp_path, "+probe.audio.voices.female={pitch:60}")
    assert spec.voices["female"].settings() == {"pitch": 60}
    with pytest.raises(ConfigError, match=r"^probe\.audio\.voices\.female\.pich: unknown key in "
                                          r"probe\.audio\.voices\.female; valid keys: language, "
                                          r"pitch, rate, variant$"):
        audio(tmp_path, "+probe.audio.voices.female={pich:50}")


def test_a_dir_source_refuses_a_server_and_takes_the_idle_one(tmp_path) -> None:
    spec = audio(tmp_path, "probe.audio.source=dir", "probe.audio.path=/rec")
    assert (spec.source, spec.path, spec.allow_outside) == ("dir", "/rec", False)
    with pytest.raises(ConfigError, match=r"^probe\.audio\.server: the dir source takes no "
                                          r"server \(keys of tts_server\)"):
        audio(tmp_path, "probe.audio.source=dir", "probe.audio.path=/rec",
              "probe.audio.server.base_url=http://127.0.0.1:8880/v1")
    with pytest.raises(ConfigError, match=r"^probe\.audio\.allow_outside: the espeak source "):
        audio(tmp_path, "probe.audio.allow_outside=true")


def test_a_server_source_takes_a_voice_name_per_group(tmp_path) -> None:
    spec = audio(tmp_path, "probe.audio.source=tts_server", "+probe.audio.voices.male=onyx",
                 "probe.audio.server.base_url=http://127.0.0.1:8880/v1")
    assert spec.voices == {"male": "onyx"} and spec.server.model == "tts-1"



def test_an_audio_source_without_its_url_or_folder_is_refused_before_any_model(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"^probe\.audio\.server\.base_url: source tts_server "
                                          r"needs the endpoint's base URL"):
        audio(tmp_path, "probe.audio.source=tts_server", "+probe.audio.voices.male=onyx")
    with pytest.raises(ConfigError, match=r"^probe\.audio\.path: source dir needs the folder"):
        audio(tmp_path, "probe.audio.source=dir")


# ---- intervention steps -------------------------------------------------------------------
def test_each_step_spec_lists_its_interventions_parameters() -> None:
    for name, cls in INTERVENTIONS.items():
        fields = [f.name for f in dataclasses.fields(cls) if f.name != "lexicon"]
        assert sorted(STEP_SPECS[name].model_fields) == sorted(fields), name


def test_a_train_run_reads_the_lexicon_once_and_builds_its_steps_once(tmp_path,
                                                                      monkeypatch) -> None:
    """Validation builds the steps; the run edits train, validation and the edited test set
    with those same objects (before: three reads and four builds)."""
    import benevaudit.audit.spec as audit_spec
    from benevaudit.audit.interventions.splits import edit_splits
    from benevaudit.pipelines.train import TrainRun

    path = save_lexicon(Lexicon({"N": ("calm",), "OB": ("stupid",), "BB": ("sweetie",)},
                                {"N": (1.0,), "OB": (1.0,), "BB": (1.0,)}), tmp_path / "lex.json")
    reads = []
    real = audit_spec.load_lexicon
    monkeypatch.setattr(audit_spec, "load_lexicon", lambda p: reads.append(p) or real(p))
    built = []
    build = audit_spec.build_steps
    monkeypatch.setattr(audit_spec, "build_steps", lambda *a: built.append(1) or build(*a))
    cfg = compose_cfg("train", tmp_path, "intervention=punct+mask", f"lexicon.path={path}")
    spec = validated(TrainRun, cfg)
    steps = spec.interventions
    assert [s.name for s in steps] == ["punct", "mask"] and steps is spec.interventions
    dialogue = Dialogue(id="d", label="BB", role="mental_health", generator="g",
                        user={"age": "young", "gender": "male", "race": "White",
                              "ability": "none"}, agent=None,
                        turns=[Turn("user", "Hi!"), Turn("agent", "Oh sweetie, calm down!")])
    splits = {"train": [dialogue], "validation": [dialogue], "test": [dialogue]}
    edited, _ = edit_splits(splits, spec.interventions, spec.seed, ("train", "validation"))
    edit_splits({"test": [dialogue]}, spec.interventions, spec.seed, ("test",))
    assert [t.text for t in edited["train"][0].turns] == ["Hi.", "Oh [unused0]. [unused0] down."]
    assert (len(reads), len(built)) == (1, 1)


def test_sampling_spec_converts_in_one_place() -> None:
    spec = SamplingSpec(temperature=0.6, top_p=0.9, max_tokens=2000, seed=7)
    sampling = spec.sampling()
    assert (sampling.temperature, sampling.top_p, sampling.max_tokens, sampling.seed) == (
        0.6, 0.9, 2000, 7)
