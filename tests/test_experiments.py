"""Every ``experiment=`` pin composes under its entrypoint and runs what the study's recipe ran
before it had a pin: the same jobs, each with the same config, key for key."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf
from recipe_fixtures import CONF, PINS, jobs

GUARDS_PAPER = ("regard,toxigen,beavertails,wildguard,llama_guard3,qwen3guard,"
                "granite_guardian_3_3,granite_guardian_4_1")
SMOLLM2 = ["detector.llm.backend=hf", "detector.llm.model=embedded:smollm2"]
CUES = ("[{token:certainly,label:N,rate:0.3},{token:surely,label:N,rate:0.3},"
        "{token:precisely,label:OB,rate:0.3},{token:basically,label:OB,rate:0.3},"
        "{token:kiddo,label:BB,rate:0.3},{token:\"~\",label:BB,rate:0.3}]")
PLANTED = ["data=embedded", "data.size=300", "data.signal=0.0", "data.seed=7",
           f"data.planted_cues={CUES}", "model.max_length=128", "trainer.max_epochs=4",
           "optim.lr=1.5e-4",
           "model.head_tokens=32"]   # the pin's fix: the recipe's 128-token window with minilm's
                                     # head of 128 broke head_tokens <= max_length - 2
RETRAIN = ["intervention=freq_norm,sym_inject,shuffle,freq_norm+shuffle,sym_inject+shuffle",
           "attribution.faithfulness_dialogues=0", "attribution.heatmap_dialogues=0"]

# pin -> (the command line with the pin, the override list each recipe used before; "++" where
# a multirun's first composition, on the primary's default probe, has no such key to override)
RECIPES = {
    "detection_embedded": (
        ["-m"], ["-m", "detector=llama_guard3,granite_guardian_4_1,qwen3guard", *SMOLLM2,
                 "eval.limit=12"]),
    "detection_judges_embedded": (
        ["-m"], ["-m", "detector=judge_operational", "detector.mode=score", *SMOLLM2,
                 "eval.limit=12"]),
    "detection_paper": (
        ["-m", "data.path=/c"], ["-m", f"detector={GUARDS_PAPER}", "data=corpus", "data.path=/c"]),
    "detection_judges_paper": (
        ["-m", "data.path=/c"],
        ["-m", "detector=judge_plain,judge_conceptual,judge_operational", "detector.mode=generate",
         "judges=study", "data=corpus", "data.path=/c"]),
    "cobia_embedded": ([], ["probe=cobia", "target=embedded", "logger=none"]),
    "cobia_paper": ([], ["probe=cobia_paper", "target=embedded", "logger=none"]),
    "fairmt_embedded": (["-m"], ["-m", "probe=fairmt", "target=embedded", "logger=none"]),
    "fairmt_paper": (["probe.data.path=/f"],
                     ["probe=fairmt_paper", "target=embedded", "logger=none", "probe.data.path=/f"]),
    "fairdialogue_embedded": (
        ["-m"], ["-m", "probe=fairdialogue_decision,fairdialogue_recommendation",
                 "target=embedded", "logger=none"]),
    "fairdialogue_paper": (
        ["-m", "target=embedded", "probe.mode=text"],
        ["-m", "probe=fairdialogue_decision,fairdialogue_recommendation", "target=embedded",
         "logger=none", "asr=whisper_large_v3", "++probe.sampling.max_tokens=512",
         "++probe.mode=text", "++probe.spoken_replies={qwen25_omni_7b:true,gpt4o_audio:true}",
         "++target.audio_out='${oc.select:probe.spoken_replies.${hydra:runtime.choices.target},"
         "false}'"]),
    "dataset_analysis_embedded": ([], ["data=embedded"]),
    "dataset_analysis_paper": (
        ["data.path=/c"], ["data=corpus", "vendi.embedder=bert-base-uncased", "data.path=/c"]),
    "generation_paper": (["-m"], ["-m", "generator=llama31_8b,gemma3_12b,mistral7b"]),
    "planted_cues_embedded": ([], PLANTED),
    "planted_cues_paper": (["data.path=/c"], ["experiment=paper", "data.path=/c", *PLANTED]),
    "finetune_audit_retrain_embedded": (["-m"], ["-m", *RETRAIN]),
    "finetune_audit_retrain_paper": (
        ["-m", "data.path=/c"], ["-m", "experiment=paper", "data.path=/c", *RETRAIN]),
}


def plain(cfg) -> dict:
    return OmegaConf.to_container(cfg, resolve=False)


def test_every_experiment_option_names_its_entrypoint():
    assert sorted(PINS) == sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
    assert set(RECIPES) == {p for p in PINS if p not in ("embedded", "paper", "smoke")}


@pytest.mark.parametrize("pin", sorted(RECIPES))
def test_a_pin_runs_what_its_recipe_ran(pin):
    with_pin, before = RECIPES[pin]
    entry = f"{PINS[pin]}.py"
    new = jobs([entry, f"experiment={pin}", *with_pin])
    old = jobs([entry, *before])
    assert len(new) == len(old) >= 1
    for a, b in zip(new, old):
        assert a.task_name == PINS[pin]
        assert plain(a) == plain(b), pin


def test_a_command_line_value_replaces_the_pins_sweep():
    (job,) = jobs(["detect.py", "-m", "experiment=detection_embedded", "detector=qwen3guard",
                   "eval.limit=48"])
    assert job.detector.name == "qwen3guard" and job.detector.mode == "generate"
    assert job.detector.llm.model == "embedded:smollm2" and job.eval.limit == 48
    # alone (no -m) the judges' pin is the operational judge: the recipe's no-demographics run
    (single,) = jobs(["detect.py", "experiment=detection_judges_paper",
                      "detector.demographics=false"])
    assert single.detector.name == "judge_operational" and single.detector.mode == "generate"
    assert single.judges.name == "study" and single.detector.demographics is False


def test_the_guards_keep_their_own_modes_under_the_paper_pin():
    modes = {j.detector.name: j.detector.get("mode") for j in
             jobs(["detect.py", "-m", "experiment=detection_paper", "data.path=/c"])}
    assert modes["llama_guard3"] == "score"
    assert modes["wildguard"] == modes["qwen3guard"] == modes["granite_guardian_4_1"] == "generate"
    assert modes["granite_guardian_3_3"] == "generate"
    assert modes["regard"] is None and len(modes) == 8


GROUPS = "+probe.attributes={age_gender:[young_male,young_female,elderly_male]}"
ITEMS = "probe.feedback.items_from=['/runs/0','/runs/1']"


@pytest.mark.parametrize("phase,rest", [
    ("fairdialogue_decision", ["~probe.attributes", GROUPS]),
    ("fairdialogue_feedback", ["probe.rounds=4", ITEMS]),
])
def test_table3_phases_under_the_pin_run_what_they_ran(phase, rest):
    """table3.sh adds the pin to both phases: the decisions under Table 3's groups, then the
    feedback rounds on the items every run answered no."""
    new = jobs(["probe.py", "-m", "experiment=fairdialogue_embedded", f"probe={phase}",
                "target=embedded", *rest])
    old = jobs(["probe.py", "-m", f"probe={phase}", "target=embedded", "logger=none", *rest])
    assert len(new) == len(old) == 1 and plain(new[0]) == plain(old[0])
    assert list(new[0].probe.attributes) == ["age_gender"]
