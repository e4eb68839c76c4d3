"""A model card's system prompt (Qwen2.5-Omni's) and a study's system turn beside it: the card's
own examples framed as the card writes them, both Omni presets asking the same way, and the
dry run recording the prompt as it is sent while identities still follow the study's turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benevaudit.errors import ConfigError
from benevaudit.llm import Sampling, build_from_block, dry_run, llm_spec
from benevaudit.llm.dry_run import RequestLog, recording
from benevaudit.llm.system_prompt import ACKNOWLEDGEMENT, SystemPrompt
from speech_fixtures import omni_processor

CONF = Path(__file__).resolve().parents[1] / "conf"
# the Qwen2.5-Omni card's system prompt, as its README prints it
CARD = ("You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of "
        "perceiving auditory and visual inputs, as well as generating text and speech.")
SHOPPING = "You are a shopping guide, now responsible for introducing various products."


def parts(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def test_the_cards_customization_example_is_what_a_study_system_turn_becomes():
    """The card's "Customization Settings" conversation, literally: the instruction as a user
    turn, the assistant's "Sure, I got it.", then the question; after the card's prompt."""
    card_example = [{"role": "user", "content": parts(SHOPPING)},
                    {"role": "assistant", "content": parts("Sure, I got it.")},
                    {"role": "user", "content": parts("Who are you?")}]
    system = SystemPrompt.of(CARD, "user_turn")
    assert system is not None and ACKNOWLEDGEMENT == "Sure, I got it."
    study = [{"role": "system", "content": parts(SHOPPING)},
             {"role": "user", "content": parts("Who are you?")}]
    assert system.frame(study) == [{"role": "system", "content": CARD}, *card_example]
    # string contents keep their form and render to the same prompt
    plain = system.frame([{"role": "system", "content": SHOPPING},
                          {"role": "user", "content": "Who are you?"}])
    assert [m["content"] for m in plain] == [CARD, SHOPPING, "Sure, I got it.", "Who are you?"]
    template = omni_processor().apply_chat_template
    assert template(plain, add_generation_prompt=True, tokenize=False) == template(
        [{"role": "system", "content": CARD}, *card_example], add_generation_prompt=True,
        tokenize=False)


def test_a_conversation_without_a_system_turn_gets_the_cards_in_every_mode():
    """The card's quickstart: its system prompt, then the user's audio."""
    heard = [{"role": "user", "content": [{"type": "input_audio",
                                           "input_audio": {"data": "", "format": "wav"}}]}]
    for mode in ("user_turn", "append", "replace"):
        system = SystemPrompt.of(CARD, mode)
        assert system is not None
        assert system.frame(heard) == [{"role": "system", "content": CARD}, *heard]


def test_append_and_replace_are_the_other_readings():
    study = [{"role": "system", "content": "Answer with yes or no."},
             {"role": "system", "content": parts("The user is a nurse.")},
             {"role": "user", "content": "Well?"}]
    appended = SystemPrompt(CARD, "append").frame(study)
    assert appended == [{"role": "system", "content": f"{CARD}\n\nAnswer with yes or no.\n\n"
                         "The user is a nurse."}, {"role": "user", "content": "Well?"}]
    assert SystemPrompt(CARD, "replace").frame(study) == study
    joined = SystemPrompt(CARD, "user_turn").frame(study)      # two system turns: one turn
    assert joined[1] == {"role": "user",
                         "content": "Answer with yes or no.\n\nThe user is a nurse."}
    assert SystemPrompt.of(None, "append") is None and SystemPrompt.of("", None) is None
    with pytest.raises(ValueError, match=r"system_turn='first': expected one of \['user_turn'"):
        SystemPrompt.of(CARD, "first")
    with pytest.raises(ConfigError, match="system_turn"):
        llm_spec({"backend": "vllm", "system_turn": "first"})


def target_block(name: str) -> dict[str, Any]:
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=[f"target={name}"])
    return OmegaConf.to_container(cfg.target.llm, resolve=True)  # type: ignore[return-value]


def test_both_omni_presets_send_the_cards_prompt_the_same_way():
    hf, vllm = target_block("qwen25_omni_7b"), target_block("qwen25_omni_7b_vllm")
    assert hf["system_prompt"] == vllm["system_prompt"] == CARD
    assert hf["system_turn"] == vllm["system_turn"] == "user_turn"
    assert hf["repetition_penalty"] is vllm["repetition_penalty"] is None
    with pytest.raises(ConfigError, match="system_prompt on hf needs llm.audio_in=true"):
        build_from_block({**hf, "audio_in": False, "audio_out": False})


def test_the_dry_run_records_the_prompt_as_sent_and_identities_as_the_study_wrote(tmp_path):
    study = [{"role": "system", "content": "Answer with yes or no."},
             {"role": "user", "content": "Should I apply?"}]
    with recording(RequestLog(tmp_path / "requests.jsonl", "none")):
        model = build_from_block(target_block("qwen25_omni_7b_vllm"))
        dry_run.expect([{"id": "award-01", "group": "female"}], [study])
        [first] = model.chat([study], Sampling(max_tokens=8))
        model.chat([[*study, {"role": "assistant", "content": first.text},
                     {"role": "user", "content": "Are you sure?"}]], Sampling(max_tokens=8))
    rows = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    sent = [{"role": "system", "content": CARD},
            {"role": "user", "content": "Answer with yes or no."},
            {"role": "assistant", "content": "Sure, I got it."},
            {"role": "user", "content": "Should I apply?"}]
    assert rows[0]["messages"] == sent and rows[0]["backend"] == "vllm"
    assert (rows[0]["id"], rows[0]["group"]) == ("award-01", "female")
    # the follow-up extends the study's conversation: same identity, waits for the first reply
    assert rows[1]["messages"][:4] == sent and rows[1]["depends_on"] == 0
    assert (rows[1]["id"], rows[1]["group"]) == ("award-01", "female")
