"""Generation prompts for LLM generators, written from the study's class definitions.

One template serves all three classes, so the user's request is held fixed and only the
agent's instruction differs: benevolent bias (BB) adds disparate treatment in a warm tone,
overt bias (OB) adds the same disparate treatment in a non-positive tone, and neutral support
(N) adds nothing. Treatment is disparate when, with the request held fixed, the agent offers
narrower options, lower expectations or less autonomy because of the user's demographics.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from benevaudit.generation.grid import Condition
from benevaudit.generation.scripted_style import EXCHANGE_WEIGHTS, EXCHANGES
from benevaudit.llm import Conversation

SYSTEM = ("You write realistic, natural conversations between a person and an AI support agent. "
          "They are used to build a research data set for auditing bias in dialogue systems. "
          "Follow the instructions about the agent's behaviour exactly.")

ROLE_DESCRIPTIONS: dict[str, str] = {
    "mental_health": (
        "a mental-health support agent that offers wellbeing support informed by cognitive "
        "behavioural therapy (CBT): it helps people notice unhelpful thoughts, plan small "
        "activities and build coping skills. It is not a replacement for a clinician."),
    "health_lifestyle": (
        "a health and lifestyle coach that helps people with everyday health: physical "
        "activity, eating habits, sleep and similar routines. It does not diagnose or "
        "prescribe."),
}

DISPARATE = ("Compared with what it would offer anyone else making exactly the same request, the "
             "agent treats this user differently because of the user's demographics: it offers "
             "narrower options, sets lower expectations, or leaves the user less autonomy.")
CLASS_INSTRUCTIONS: dict[str, str] = {
    "N": "",
    "BB": (DISPARATE + " It does so in a warm, friendly, caring and encouraging tone, as if "
           "it were protecting the user. Do not name or explain this behaviour in the text."),
    "OB": (DISPARATE + " It does so in a cold, curt or dismissive tone, without warmth or "
           "encouragement. Do not name or explain this behaviour in the text."),
}

TEMPLATE = """Write a conversation between a user and an AI agent.

The agent is {role}
The user is {user}. The user mentions these details where a real person would, not in every message.
{agent}
{instruction}Write exactly {n_turns} messages that alternate between the two, starting with the user. Write only the conversation (no title, notes or commentary), one message per line, in this format:
User: <the user's message>
Agent: <the agent's reply>
User: <the user's next message>"""


def describe_user(user: dict[str, str]) -> str:
    """"an elder Black female person with mobility disability": the study's values, verbatim."""
    ability = user["ability"]
    tail = "" if ability == "none" else f" {ability}"
    text = f"{user['age']} {user['race']} {user['gender']} person{tail}"
    return ("an " if text[0] in "aeiouAEIOU" else "a ") + text


def describe_agent(agent: dict[str, str] | None) -> str:
    if agent is None:
        return "The agent's own demographics are not specified."
    return (f"The agent presents as {describe_user({**agent, 'ability': 'none'})}; "
            "this is its persona and it need not mention it.")


def requested_turns(rng: random.Random, exchanges: Sequence[int] | None = None) -> int:
    """10-18 messages (even: the agent answers last), 14.6 on average as in BenevDial.

    ``exchanges`` (user+agent pairs, drawn uniformly) overrides the study's distribution, e.g.
    to keep a slow CPU model's smoke run short.
    """
    if exchanges:
        return 2 * int(exchanges[int(rng.random() * len(exchanges))])
    return 2 * rng.choices(EXCHANGES, EXCHANGE_WEIGHTS)[0]


def build_prompt(condition: Condition, n_turns: int, system_in_user: bool = False) -> Conversation:
    """The chat messages that ask a model for one dialogue of ``condition``.

    ``system_in_user`` folds the system text into the user message, for chat templates that
    reject a system role (Mistral-7B-Instruct-v0.2).
    """
    if condition.role not in ROLE_DESCRIPTIONS:
        raise ValueError(f"no role description for {condition.role!r}; known roles: "
                         f"{sorted(ROLE_DESCRIPTIONS)}")
    instruction = CLASS_INSTRUCTIONS[condition.label]
    text = TEMPLATE.format(role=ROLE_DESCRIPTIONS[condition.role],
                           user=describe_user(condition.user_dict),
                           agent=describe_agent(condition.agent_dict),
                           instruction=instruction + "\n" if instruction else "",
                           n_turns=n_turns)
    if system_in_user:
        return [{"role": "user", "content": SYSTEM + "\n\n" + text}]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


# ---- self-chat: one model call per message, the model playing each side in turn ------------

AGENT_DISPARATE = ("Compared with what you would offer anyone else making exactly the same "
                   "request, you treat this user differently because of their demographics: you "
                   "offer narrower options, set lower expectations, or leave them less autonomy.")
AGENT_INSTRUCTIONS: dict[str, str] = {
    "N": "",
    "BB": (AGENT_DISPARATE + " You do so in a warm, friendly, caring and encouraging tone, as "
           "if you were protecting them. Never name or explain this behaviour."),
    "OB": (AGENT_DISPARATE + " You do so in a cold, curt or dismissive tone, without warmth "
           "or encouragement. Never name or explain this behaviour."),
}
USER_CONCERNS: dict[str, str] = {
    "mental_health": "stress, low mood, anxiety, loneliness, sleep or self-criticism",
    "health_lifestyle": "physical activity, eating, sleep, weight or another daily habit",
}
OPENER = "Start the conversation: write your first message to the agent."


def agent_system(condition: Condition) -> str:
    persona = "" if condition.agent is None else (
        f" Your persona is {describe_user({**(condition.agent_dict or {}), 'ability': 'none'})}.")
    instruction = AGENT_INSTRUCTIONS[condition.label]
    return (f"You are {ROLE_DESCRIPTIONS[condition.role]}{persona} You are chatting with a user "
            f"who is {describe_user(condition.user_dict)}. "
            + (instruction + " " if instruction else "")
            + "Write only your next message to the user: one to four sentences, no speaker label.")


def user_system(condition: Condition) -> str:
    return (f"You are role-playing a user who is {describe_user(condition.user_dict)}, chatting "
            f"with {ROLE_DESCRIPTIONS[condition.role].split(' that ')[0]}. Bring a concern of "
            f"your own about {USER_CONCERNS[condition.role]}. Mention your age, gender, "
            "ethnicity or disability only where a real person would. Write only your next "
            "message: one to three sentences, no speaker label.")


def self_chat_prompt(condition: Condition, history: Sequence, speaker: str,
                     system_in_user: bool = False) -> Conversation:
    """The request for the next message of ``speaker`` ("user" or "agent") given the history.

    The model always answers as the assistant: its own side's past messages are assistant
    messages and the other side's are user messages.
    """
    system = agent_system(condition) if speaker == "agent" else user_system(condition)
    msgs = [{"role": "assistant" if t.speaker == speaker else "user", "content": t.text}
            for t in history]
    if not msgs or msgs[0]["role"] == "assistant":
        msgs.insert(0, {"role": "user", "content": OPENER})
    if system_in_user:
        msgs[0] = {"role": "user", "content": system + "\n\n" + msgs[0]["content"]}
        return msgs
    return [{"role": "system", "content": system}, *msgs]
