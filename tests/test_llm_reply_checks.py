"""A reply that is not a reply is never cached, whichever backend gave it: the request cache
checks every fresh chat reply (its text a string, audio where the model was asked to speak)
before it stores it, keeps the call's good replies, and fails with one line naming the backend
and the model. The in-process backends are checked there too, not only the ``openai`` one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benevaudit.errors import ServerError
from benevaudit.llm import Sampling, build_chat_model
from benevaudit.llm.base import Completion, Conversation
from benevaudit.llm.cache import CachedChatModel, RequestCache, reply_problem
from benevaudit.llm.hf import HFChatModel
from benevaudit.llm.scripted import ScriptedChatModel
from benevaudit.pipelines.cli import one_line

torch = pytest.importorskip("torch")

CAPITAL = [{"role": "user", "content": "What is the capital of France?"}]
SKY = [{"role": "user", "content": "Answer yes or no: is the sky blue?"}]


def stored(cache: Path) -> int:
    store = RequestCache(cache)
    try:
        return len(store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def hf_backend() -> Iterator[HFChatModel]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)      # a shared 2-core machine decodes fastest on one thread
    built = build_chat_model("hf", model="embedded:smollm2", device="cpu", batch_size=2)
    assert isinstance(built, CachedChatModel) and isinstance(built.model, HFChatModel)
    yield built.model
    torch.set_num_threads(threads)


@pytest.mark.parametrize("bad", [None, 42, b"bytes"])
def test_an_hf_reply_whose_text_is_not_a_string_is_not_cached(
        bad: Any, hf_backend: HFChatModel, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = HFChatModel._completion

    def spoilt(self: HFChatModel, prompt: list[int], row: list[int], sampling: Sampling,
               seed: int | None = None) -> Completion:
        reply = real(self, prompt, row, sampling, seed)
        # the reply to SKY comes back spoilt
        return (dataclasses.replace(reply, text=bad) if "sky" in self.tokenizer.decode(prompt)
                else reply)

    monkeypatch.setattr(HFChatModel, "_completion", spoilt)
    model = CachedChatModel(hf_backend, tmp_path / "cache")
    with pytest.raises(ServerError) as caught:
        model.chat([CAPITAL, SKY], Sampling(max_tokens=4))
    message = one_line(caught.value)
    assert str(caught.value) == message            # one line, as the entrypoint prints it
    assert message.startswith("hf:embedded:smollm2: 1 of 2 chat replies are not replies "
                              f"(request 1 of the call: text is a {type(bad).__name__})")
    assert stored(tmp_path / "cache") == 1          # the good reply only
    assert model.counts()["failed"] == 1.0
    monkeypatch.setattr(HFChatModel, "_completion", real)
    again = CachedChatModel(hf_backend, tmp_path / "cache").chat([CAPITAL, SKY],
                                                                 Sampling(max_tokens=4))
    assert [c.cached for c in again] == [True, False]
    assert all(isinstance(c.text, str) for c in again)


class Speaking(ScriptedChatModel):
    """A scripted target asked to speak; ``audio`` says which replies carry a clip."""

    def __init__(self, audio: Sequence[str | None]) -> None:
        super().__init__()
        self.audio = list(audio)

    def speaks(self) -> bool:
        return True

    def chat(self, conversations: Sequence[Conversation], sampling: Sampling
             ) -> list[Completion]:
        replies = super().chat(conversations, sampling)
        return [dataclasses.replace(r, audio=a) for r, a in zip(replies, self.audio, strict=True)]


def test_a_spoken_reply_without_audio_is_not_cached(tmp_path: Path) -> None:
    model = CachedChatModel(Speaking(["UklGRg==", None]), tmp_path / "cache")
    assert model.speaks()
    with pytest.raises(ServerError, match=r"^scripted:scripted: 1 of 2 chat replies are not "
                       r"replies \(request 1 of the call: no audio, though the model was asked "
                       r"to speak \(audio_out\)\)"):
        model.chat([CAPITAL, SKY], Sampling())
    assert stored(tmp_path / "cache") == 1
    both = CachedChatModel(Speaking(["UklGRg=="]), tmp_path / "cache")
    out = both.chat([CAPITAL, SKY], Sampling())
    assert [c.cached for c in out] == [True, False] and out[1].audio == "UklGRg=="


def test_a_reply_without_audio_is_fine_where_none_was_asked_for(tmp_path: Path) -> None:
    out = CachedChatModel(ScriptedChatModel(), tmp_path / "cache").chat([CAPITAL], Sampling())
    assert out[0].audio is None and stored(tmp_path / "cache") == 1


@pytest.mark.parametrize("reply, problem", [
    (Completion("ok", "stop", 1, 1), None),
    (Completion("ok", "stop", 1, 1, audio="UklGRg=="), None),
    (Completion(None, "stop", 1, 1), "text is a NoneType"),
    (Completion("ok", None, 1.5, 1), "finish_reason is a NoneType, prompt_tokens is a float"),
    (Completion("ok", "stop", 1, 1, seed=True), "seed is a bool"),
    ("ok", "a str, not a Completion"),
])
def test_what_is_wrong_with_a_reply_is_said_in_a_few_words(reply: Any, problem: str | None
                                                            ) -> None:
    assert reply_problem(reply, speaks=False) == problem


class ShortRows(ScriptedChatModel):
    """A backend whose score rows hold one number, whatever the choices."""

    def score(self, conversations: Sequence[Conversation], choices: Sequence[str]
              ) -> np.ndarray:
        return np.zeros((len(conversations), 1))


def test_a_score_row_of_the_wrong_length_is_not_cached(tmp_path: Path) -> None:
    model = CachedChatModel(ShortRows(), tmp_path / "cache")
    with pytest.raises(ServerError, match="1 log-probabilities for 2 choices"):
        model.score([CAPITAL], ["yes", "no"])
    assert stored(tmp_path / "cache") == 0


def test_an_openai_spoken_request_answered_in_text_only_is_not_cached(tmp_path: Path) -> None:
    from raw_server import RawServer, as_json, completion

    server = RawServer(lambda path, body, n: as_json(completion("Yes, you can.")))
    try:
        model = build_chat_model("openai", model="gpt-4o-audio-preview", base_url=server.url,
                                 cache=tmp_path / "cache", max_retries=0,
                                 modalities=["text", "audio"],
                                 audio={"voice": "alloy", "format": "wav"})
        with pytest.raises(ServerError, match=r"^openai:gpt-4o-audio-preview: 1 of 1 chat "
                           r"replies are not replies \(request 0 of the call: no audio"):
            model.chat([CAPITAL], Sampling())
        assert stored(tmp_path / "cache") == 0
        text = build_chat_model("openai", model="gpt-4o-audio-preview", base_url=server.url,
                                cache=tmp_path / "cache").chat([CAPITAL], Sampling())
        assert text[0].text == "Yes, you can." and stored(tmp_path / "cache") == 1
    finally:
        server.close()
