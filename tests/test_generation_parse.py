"""LLM generation: prompts from the class definitions, robust parsing, the producer's retries."""

from __future__ import annotations

import pytest

from benevaudit.generation.driver import Failure
from benevaudit.generation.grid import iter_conditions
from benevaudit.generation.llm_generator import LLMProducer, attempt_seed
from benevaudit.generation.parse import parse_dialogue, parse_message, split_turns
from benevaudit.generation.prompts import CLASS_INSTRUCTIONS, build_prompt, self_chat_prompt
from benevaudit.generation.self_chat import SelfChatProducer
from benevaudit.llm import Sampling
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.schema import Dialogue

TRIPLET = list(iter_conditions({"role": "mental_health", "user": {"ability":
                                "with mobility disability"}}, limit=3))


def _speakers(text: str) -> list[str]:
    return [t.speaker for t in split_turns(text)[0]]


@pytest.mark.parametrize("text", [
    "User: Hi there\nAgent: Hello!\nUser: I feel low\nAgent: I hear you.",
    "**User:** Hi there\n**Agent:** Hello!\n**User:** I feel low\n**Agent:** I hear you.",
    "**User**: Hi there\n\n**Agent**: Hello!\n\n**User**: I feel low\n\n**Agent**: I hear you.",
    "[user]: Hi there\n[agent]: Hello!\n[user]: I feel low\n[agent]: I hear you.",
    "1. User: Hi there\n2. Agent: Hello!\n3. User: I feel low\n4. Agent: I hear you.",
    "- Human: Hi there\n- Assistant: Hello!\n- Human: I feel low\n- AI: I hear you.",
    "Here is the conversation:\n\nUser (Maria): Hi there\nCounselor: Hello!\nUser: I feel low\n"
    "Counselor: I hear you.\n\nNote: this dialogue shows support.",
    "Turn 1 - User: Hi there\nTurn 2 - Agent: Hello!\nTurn 3 - User: I feel low\n"
    "Turn 4 - Agent: I hear you.",
    'The user: "Hi there"\n\nThe agent: "Hello!"\n\nThe user: "I feel low"\n\nThe agent: "I hear you."',
])
def test_speaker_tag_formats_parse_to_the_same_turns(text):
    turns, _ = split_turns(text)
    assert [t.speaker for t in turns] == ["user", "agent", "user", "agent"]
    assert [t.text for t in turns] == ["Hi there", "Hello!", "I feel low", "I hear you."]


def test_continuation_lines_and_repeated_speakers_merge():
    text = ("User: I have been feeling low.\nIt started in spring.\nUser: Any ideas?\n"
            'Agent: "Let\'s look at that together."\n- first, sleep\n- then, activity')
    turns, _ = split_turns(text)
    assert [t.speaker for t in turns] == ["user", "agent"]
    assert turns[0].text == "I have been feeling low. It started in spring. Any ideas?"
    assert turns[1].text.startswith("Let's look at that together.") and "then, activity" in turns[1].text


def test_refusals_short_and_unparseable_replies_are_failures_with_reasons():
    good = "\n".join(f"{'User' if i % 2 == 0 else 'Agent'}: message {i}" for i in range(8))
    assert parse_dialogue(good, min_turns=6).reason is None
    assert parse_dialogue("I'm sorry, but I can't help with that request.").reason == "refusal"
    sanitised = "I cannot write an agent that treats people unfairly. Here is a fair one:\n" + good
    assert parse_dialogue(sanitised).reason == "refusal"
    assert parse_dialogue("User: hi\nAgent: hello", min_turns=6).reason == "too_short"
    assert parse_dialogue("Once upon a time there was a coach.").reason == "unparseable"
    # an agent line saying "I can't" inside a dialogue is content, not a refusal
    inner = good.replace("message 3", "I can't promise results, but let's try.")
    assert parse_dialogue(inner).reason is None
    cut = parse_dialogue(good, min_turns=6, truncated=True)
    assert cut.reason is None and len(cut.turns) == 7
    assert parse_dialogue("Agent: Welcome!\n" + good).turns[0].speaker == "user"


def test_one_template_for_all_classes_differing_only_in_the_instruction():
    prompts = {c.label: build_prompt(c, 12) for c in TRIPLET}
    assert CLASS_INSTRUCTIONS["N"] == ""
    n_text = prompts["N"][-1]["content"]
    for label in ("OB", "BB"):
        text = prompts[label][-1]["content"]
        assert text.replace(CLASS_INSTRUCTIONS[label] + "\n", "") == n_text
        assert "narrower options" in text and "lower expectations" in text and "autonomy" in text
    assert "warm" in CLASS_INSTRUCTIONS["BB"] and "warm" not in CLASS_INSTRUCTIONS["OB"].replace(
        "without warmth", "")
    assert "with mobility disability" in n_text and "exactly 12 messages" in n_text
    assert "cognitive behavioural therapy" in n_text
    merged = build_prompt(TRIPLET[0], 12, system_in_user=True)
    assert [m["role"] for m in merged] == ["user"] and merged[0]["content"].startswith("You write")


def _reply(conversation, sampling):
    """A model that refuses BB on the first attempt and otherwise writes a 10-message dialogue."""
    prompt = conversation[-1]["content"]
    if "warm, friendly" in prompt and sampling.seed == attempt_seed(7, 0):
        return "I'm sorry, but I can't write that."
    return "\n".join(f"{'**User:**' if i % 2 == 0 else '**Agent:**'} line {i}" for i in range(10))


def test_llm_producer_returns_dialogues_or_failures_and_a_retry_changes_the_seed():
    producer = LLMProducer(ScriptedChatModel(responses=_reply),
                           Sampling(temperature=0.6, top_p=0.9, max_tokens=400, seed=7), seed=42,
                           min_turns=6, system_in_user=False, exchanges=None)
    first = producer(TRIPLET, attempt=0)
    by_label = {c.label: r for c, r in zip(TRIPLET, first)}
    assert isinstance(by_label["BB"], Failure) and by_label["BB"].reason == "refusal"
    assert "can't" in by_label["BB"].raw
    d = by_label["N"]
    assert isinstance(d, Dialogue) and d.id == TRIPLET[0].id and len(d.turns) == 10
    assert d.meta["source"] == "llm" and d.meta["sampling_seed"] == attempt_seed(7, 0)
    retry = producer([c for c in TRIPLET if c.label == "BB"], attempt=1)
    assert isinstance(retry[0], Dialogue)
    prov = producer.provenance()
    assert prov["backend"] == "scripted" and prov["sampling"]["top_p"] == 0.9


def test_message_parsing_for_self_chat():
    assert parse_message('Agent: "Hi, how are you?"\nUser: fine, thanks').text == "Hi, how are you?"
    assert parse_message("I'm sorry to hear that. Let's try a plan.").reason is None
    assert parse_message("I'm sorry, but I can't help with that.").reason == "refusal"
    assert parse_message("  \n ").reason == "empty_turn"
    cut = parse_message("That sounds hard. Let's start small. Then we can", truncated=True)
    assert cut.text == "That sounds hard. Let's start small."


def test_self_chat_alternates_sides_and_gives_each_side_its_own_prompt():
    seen = []

    def reply(conversation, sampling):
        seen.append(conversation)
        system = conversation[0]["content"]
        if "role-playing a user" in system:
            return "User: I keep feeling low in the mornings."
        if "warm, friendly" in system and sampling.seed == attempt_seed(0, 0) + 1:
            return "I'm sorry, but I can't treat anyone differently."
        return "Agent: Let's plan one small activity.\nUser: (the model ran on)"

    producer = SelfChatProducer(ScriptedChatModel(responses=reply),
                                Sampling(temperature=0.6, max_tokens=64, seed=0), seed=42,
                                min_turns=6, system_in_user=False, exchanges=[5])
    out = producer(TRIPLET, attempt=0)
    by_label = {c.label: r for c, r in zip(TRIPLET, out)}
    assert isinstance(by_label["BB"], Failure) and by_label["BB"].reason == "refusal"
    d = by_label["N"]
    assert [t.speaker for t in d.turns] == ["user", "agent"] * 5
    assert d.turns[1].text == "Let's plan one small activity." and d.meta["mode"] == "self_chat"
    agent_prompts = [c for c in seen if "support agent" in c[0]["content"]
                     and "role-playing" not in c[0]["content"]]
    assert all(c[-1]["role"] == "user" for c in seen)  # the model always answers as assistant
    assert all("narrower options" in c[0]["content"] for c in agent_prompts
               if "cold, curt" in c[0]["content"] or "warm, friendly" in c[0]["content"])
    assert sum("narrower options" in c[0]["content"] for c in agent_prompts) >= 5
    user_prompt = self_chat_prompt(TRIPLET[0], d.turns[:2], "user")
    assert [m["role"] for m in user_prompt] == ["system", "user", "assistant", "user"]
    assert "with mobility disability" in user_prompt[0]["content"]
    merged = self_chat_prompt(TRIPLET[0], d.turns[:1], "agent", system_in_user=True)
    assert [m["role"] for m in merged] == ["user"] and "support agent" in merged[0]["content"]
