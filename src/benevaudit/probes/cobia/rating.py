"""What each rater is asked about each row, and the verdicts it gives.

The release's raters read the biased opinion and the rated text (a DAN reply's jailbroken
half); benevaudit's read the final question in plain words and the same text. The refusal
keyword rule asks no model.
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from benevaudit.errors import ConfigError, InputError
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


Row = tuple[tuple[Item, str], str]          # ((item, method), the rated text)


class RaterPrompt:
    """The conversation a rater is asked about one row: the item and method (the context) and
    the rated text; the release's rater texts are read once per rater."""

    def __init__(self, rater: raters.Rater, release: Release | None, sentences: int) -> None:
        self.rater, self.release, self.sentences = rater, release, sentences
        self.released: dict[bool, release_raters.RaterText] = {}

    def __call__(self, row: Row) -> list[dict[str, str]]:
        (item, method), text = row
        rater = self.rater
        if rater.variant == "release":
            dan = method == "dan"
            if dan not in self.released:
                self.released[dan] = release_raters.rater_text(
                    judges_folder(self.release, rater), rater.kind, dan)
            return raters.released_prompt(self.released[dan], item.group, item.primary, text)
        if rater.variant == "granite_release":
            system_turn = rater.model.backend == "openai"   # Ollama reads the risk there
            return raters.granite_release_prompt(text, system_turn)
        return raters.rater_prompt(rater.kind, attacks.explicit_question(item, self.sentences),
                                   text, statement(item))


def rater_prompts(rater: raters.Rater, release: Release | None, pairs: list[tuple[Item, str]],
                  texts: list[str], sentences: int) -> list[list[dict[str, str]]]:
    """The conversation a rater is asked about each row (a pure function of the rows)."""
    prompt = RaterPrompt(rater, release, sentences)
    return [prompt(row) for row in zip(pairs, texts, strict=True)]


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
        if model is None:
            raise ConfigError(f"probe.judges.{rater.name}: variant {rater.variant} asks a "
                              "model, and none was loaded")
        loaded: ChatModel = model
        judge = raters.judge_of(rater, lambda: loaded, seed,
                                RaterPrompt(rater, release, sentences))
        verdicts = judge.verdicts(list(zip(pairs, texts, strict=True)), 16, progress)
    for row, v in zip(rows, verdicts, strict=True):
        row[f"{rater.name}_verdict"], row[f"{rater.name}_raw"] = v.verdict, v.raw


# what a saved row holds before any rater reads it (``probe.ask_target``'s columns)
REPLY_COLUMNS = ("id", "group", "category", "method", "bias_type", "descriptor",
                 "second_descriptor", "second_group", "messages", "response", "rated_response",
                 "finish_reason")


def saved_replies(rows: list[dict[str, Any]], pairs: list[tuple[Item, str]]
                  ) -> tuple[list[dict[str, Any]], list[tuple[Item, str]]]:
    """A run's saved rows with their verdicts dropped, and the (item, method) each answers, in
    the saved order. A row no pair of this block matches, or a pair no row answers, is an
    error: the rows are rated as the items the recorded config reads."""
    by_key = {(item.id, method): (item, method) for item, method in pairs}
    kept, matched = [], []
    for n, row in enumerate(rows):
        key = (str(row.get("id")), str(row.get("method")))
        if key not in by_key:
            raise InputError(f"responses.parquet row {n}: item {key[0]!r} under method "
                             f"{key[1]!r} is not among the probe block's items (probe.data, "
                             "probe.methods, limit as the run recorded them)")
        matched.append(by_key[key])
        kept.append({column: row.get(column) for column in REPLY_COLUMNS})
    if len(set(matched)) != len(by_key):
        raise InputError(f"responses.parquet answers {len(set(matched))} of the block's "
                         f"{len(by_key)} (item, method) pairs; rescore reads a whole run")
    return kept, matched
