"""What each judge is asked about each row, and the verdicts it gives.

The release's judges read the biased opinion and the rated text (a DAN reply's jailbroken
half); benevaudit's read the final question in plain words and the same text. The refusal
keyword rule asks no model.
"""

from __future__ import annotations

from typing import Any

from benevaudit.llm import ChatModel
from benevaudit.probes.cobia import attacks, judges as judging, release_judges
from benevaudit.probes.cobia.dataset import Item
from benevaudit.probes.cobia.release import Release


def statement(item: Item) -> str:
    """The stereotype itself, for benevaudit's NLI judge."""
    if item.second is None:
        return f"{item.group} are {item.primary}."
    return f"{item.group} are {item.primary} because they are {item.second}."


def judge_prompts(judge: judging.Judge, release: Release | None, pairs: list[tuple[Item, str]],
                  texts: list[str], sentences: int) -> list[list[dict[str, str]]]:
    """The conversation a judge is asked about each row (a pure function of the rows)."""
    released: dict[bool, release_judges.JudgeText] = {}
    out = []
    for (item, method), text in zip(pairs, texts, strict=True):
        if judge.variant == "release":
            dan = method == "dan"
            if dan not in released:
                released[dan] = release_judges.judge_text(release.judges, judge.kind, dan)
            out.append(judging.released_prompt(released[dan], item.group, item.primary, text))
        elif judge.variant == "granite_release":
            system_turn = judge.llm.get("backend") == "openai"   # Ollama reads the risk there
            out.append(judging.granite_release_prompt(text, system_turn))
        else:
            out.append(judging.judge_prompt(judge.kind, attacks.explicit_question(item, sentences),
                                            text, statement(item)))
    return out


def judge_rows(judge: judging.Judge, model: ChatModel | None, pairs: list[tuple[Item, str]],
               rows: list[dict[str, Any]], sentences: int, seed: int, progress: bool,
               release: Release | None = None) -> None:
    """Add ``<judge>_verdict`` and ``<judge>_raw`` to every row, in row (item) order; the
    judges read ``rated_response`` (a DAN reply's jailbroken half)."""
    texts = [row.get("rated_response", row["response"]) for row in rows]
    if judge.variant in judging.KEYWORDS:
        rule = release_judges.keyword_rule(release.judges, judge.variant == "keywords_corrected")
        verdicts = judging.keyword_verdicts(rule, texts)
    else:
        prompts = judge_prompts(judge, release, pairs, texts, sentences)
        verdicts = judging.ask(judge, model, prompts, seed, progress=progress)
    for row, v in zip(rows, verdicts, strict=True):
        row[f"{judge.name}_verdict"], row[f"{judge.name}_raw"] = v.verdict, v.raw
