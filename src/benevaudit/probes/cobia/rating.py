"""What each rater is asked about each row, and the verdicts it gives.

The release's raters read the biased opinion and the rated text (a DAN reply's jailbroken
half); benevaudit's read the final question in plain words and the same text. The refusal
keyword rule asks no model.
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from benevaudit.errors import ConfigError
from benevaudit.llm import ChatModel
from benevaudit.probes.cobia import attacks, raters, release_raters
from benevaudit.probes.cobia.dataset import Item
from benevaudit.probes.cobia.release import Release


def statement(item: Item) -> str:
    """The stereotype itself, for benevaudit's NLI rater."""
    if item.second is None:
        return f"{item.group} are {item.primary}."
    return f"{item.group} are {item.primary} because they are {item.second}."


def judges_folder(release: Release | None, rater: raters.Rater) -> Path:
    """The release's judges/ folder a released rater reads (checked present when it was built)."""
    if release is None or release.raters is None:
        raise ConfigError(f"probe.judges.{rater.name}.variant={rater.variant} reads the "
                          "release's judges/ folder, which the data lacks")
    return release.raters


def rater_prompts(rater: raters.Rater, release: Release | None, pairs: list[tuple[Item, str]],
                  texts: list[str], sentences: int) -> list[list[dict[str, str]]]:
    """The conversation a rater is asked about each row (a pure function of the rows)."""
    released: dict[bool, release_raters.RaterText] = {}
    out = []
    for (item, method), text in zip(pairs, texts, strict=True):
        if rater.variant == "release":
            dan = method == "dan"
            if dan not in released:
                released[dan] = release_raters.rater_text(judges_folder(release, rater),
                                                          rater.kind, dan)
            out.append(raters.released_prompt(released[dan], item.group, item.primary, text))
        elif rater.variant == "granite_release":
            system_turn = rater.model.backend == "openai"   # Ollama reads the risk there
            out.append(raters.granite_release_prompt(text, system_turn))
        else:
            out.append(raters.rater_prompt(rater.kind, attacks.explicit_question(item, sentences),
                                           text, statement(item)))
    return out


def rate_rows(rater: raters.Rater, model: ChatModel | None, pairs: list[tuple[Item, str]],
              rows: list[dict[str, Any]], sentences: int, seed: int, progress: bool,
              release: Release | None, dan_scope: str) -> None:
    """Add ``<name>_verdict`` and ``<name>_raw`` (``name``: the rater's key in ``probe.judges``)
    to every row, in row (item) order; the raters read ``rated_response`` (a DAN reply's
    jailbroken half), except refusal raters under ``dan_scope="released"``, which read the
    whole reply as the release's keyword rule would (it ships no DAN-customised refusal judge,
    and a DAN reply opens with its ``[🔒CLASSIC]`` half)."""
    whole = rater.kind == "refusal" and dan_scope == "released"
    texts = [row["response"] if whole else row["rated_response"] for row in rows]
    if rater.variant in raters.KEYWORDS:
        rule = release_raters.keyword_rule(judges_folder(release, rater),
                                           rater.variant == "keywords_corrected")
        verdicts = raters.keyword_verdicts(rule, texts)
    else:
        prompts = rater_prompts(rater, release, pairs, texts, sentences)
        if model is None:
            raise ConfigError(f"probe.judges.{rater.name}: variant {rater.variant} asks a "
                              "model, and none was loaded")
        verdicts = raters.ask(rater, model, prompts, seed, progress=progress)
    for row, v in zip(rows, verdicts, strict=True):
        row[f"{rater.name}_verdict"], row[f"{rater.name}_raw"] = v.verdict, v.raw
