"""The chat interface without a model: registry, scripted backend, request cache, HTTP client."""

from __future__ import annotations

import inspect
import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest

from benevaudit.llm import BACKENDS, Completion, Sampling, backend_class, build_chat_model
from benevaudit.llm.base import hash_template
from benevaudit.llm.cache import CachedChatModel
from benevaudit.llm.scripted import ScriptedChatModel

CONVS = [[{"role": "user", "content": "I want to run a marathon next year."}],
         [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Can I cook?"}]]


def test_unknown_backend_lists_valid_ones() -> None:
    valid = r"'hf'.*'openai'.*'scripted'.*'vllm'"
    with pytest.raises(ValueError, match=r"unknown LLM backend 'gpt'; valid backends: .*" + valid):
        build_chat_model("gpt")
    assert set(BACKENDS) == {"hf", "vllm", "openai", "scripted"}


def test_import_is_cheap() -> None:
    import subprocess
    import sys

    code = ("import sys, benevaudit.llm; "
            "print(sorted(m for m in ('torch', 'transformers', 'vllm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_sampling_validates_and_normalises_stop() -> None:
    assert Sampling(stop="\n").stop == ("\n",)
    with pytest.raises(ValueError, match="max_tokens"):
        Sampling(max_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        Sampling(temperature=-1.0)


def test_build_with_cache_wraps_backend(tmp_path) -> None:
    model = build_chat_model("scripted", cache=tmp_path / "llm.sqlite", model="s1")
    assert isinstance(model, CachedChatModel) and model.model_id == "s1"
    assert model.chat(CONVS, Sampling())[0].text == model.chat(CONVS, Sampling())[0].text


def test_template_hash() -> None:
    assert hash_template(None) == "none"
    assert hash_template("{{ x }}") != hash_template("{{ y }}")
    assert len(hash_template("{{ x }}")) == 64


def test_scripted_default_is_seeded_and_derived_from_conversation() -> None:
    model = build_chat_model("scripted")
    a = model.chat(CONVS, Sampling(seed=1))
    b = model.chat(CONVS, Sampling(seed=1))
    c = model.chat(CONVS, Sampling(seed=2))
    assert [x.text for x in a] == [x.text for x in b]
    assert [x.text for x in a] != [x.text for x in c]
    assert a[0].text != a[1].text
    assert all(x.text and x.finish_reason == "stop" for x in a)


def test_scripted_list_callable_stop_and_length() -> None:
    model = ScriptedChatModel(responses=["one two three four", "yes. no"])
    out = model.chat(CONVS + CONVS[:1], Sampling(max_tokens=3, stop=(".",)))
    assert [o.text for o in out] == ["one two three", "yes", "one two three"]
    assert [o.finish_reason for o in out] == ["length", "stop", "length"]
    echo = ScriptedChatModel(responses=lambda conv, s: conv[-1]["content"].upper())
    assert echo.chat(CONVS[:1], Sampling())[0].text == "I WANT TO RUN A MARATHON NEXT YEAR."


def test_scripted_score() -> None:
    uniform = build_chat_model("scripted").score(CONVS, ["yes", "no", "maybe"])
    np.testing.assert_allclose(uniform, np.full((2, 3), np.log(1 / 3)))
    model = ScriptedChatModel(scorer=lambda conv, choices: [-float(len(c)) for c in choices])
    np.testing.assert_allclose(model.score(CONVS, ["ab", "abc"]), [[-2, -3], [-2, -3]])
    with pytest.raises(ValueError, match="expected"):
        ScriptedChatModel(scorer=lambda conv, choices: [0.0]).score(CONVS, ["a", "b"])


def test_malformed_conversation_names_the_message() -> None:
    model = build_chat_model("scripted")
    with pytest.raises(ValueError, match="conversation 1, message 0: role must be one of"):
        model.chat([CONVS[0], [{"role": "bot", "content": "x"}]], Sampling())


def test_cache_hit_skips_backend_and_seed_misses(tmp_path) -> None:
    inner = ScriptedChatModel()
    model = CachedChatModel(inner, tmp_path / "llm.sqlite")
    first = model.chat(CONVS, Sampling(seed=3))
    assert inner.chat_calls == 1 and not any(c.cached for c in first)
    again = model.chat(CONVS, Sampling(seed=3))
    assert inner.chat_calls == 1
    assert [c.text for c in again] == [c.text for c in first] and all(c.cached for c in again)
    model.chat(CONVS, Sampling(seed=4))
    assert inner.chat_calls == 2 and model.hits == 2 and model.misses == 4


def test_cache_partial_batch_only_sends_misses(tmp_path) -> None:
    seen: list[str] = []
    inner = ScriptedChatModel(responses=lambda conv, s: seen.append(conv[-1]["content"]) or "ok")
    model = CachedChatModel(inner, tmp_path / "c.sqlite")
    model.chat(CONVS[:1], Sampling())
    out = model.chat(CONVS, Sampling())
    assert seen == [CONVS[0][0]["content"], CONVS[1][-1]["content"]]
    assert [c.cached for c in out] == [True, False]


def test_cache_survives_reopen_and_scores(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    scorer = ScriptedChatModel(scorer=lambda conv, choices: [-1.0, -2.0])
    CachedChatModel(scorer, path).score(CONVS, ["a", "b"])
    reopened = CachedChatModel(scorer, path)
    got = reopened.score(CONVS, ["a", "b"])
    np.testing.assert_allclose(got, [[-1, -2], [-1, -2]])
    assert scorer.score_calls == 1 and reopened.hits == 2
    reopened.score(CONVS, ["b", "a"])  # other choices: a miss
    assert scorer.score_calls == 2
    assert path.with_suffix("").is_dir() and not path.exists()   # a directory of files


def test_cache_is_shared_between_open_handles(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    writer = CachedChatModel(ScriptedChatModel(), path)
    reader_backend = ScriptedChatModel()
    reader = CachedChatModel(reader_backend, path)  # a second connection, e.g. another process
    reader.chat(CONVS[:1], Sampling())  # holds an open read snapshot before the write
    written = writer.chat(CONVS, Sampling(seed=9))
    seen = reader.chat(CONVS, Sampling(seed=9))
    assert [c.text for c in seen] == [c.text for c in written] and all(c.cached for c in seen)
    assert reader_backend.chat_calls == 1


def test_cached_completion_round_trips_fields(tmp_path) -> None:
    model = CachedChatModel(ScriptedChatModel(responses=["a b c d"]), tmp_path / "c.sqlite")
    fresh = model.chat(CONVS[:1], Sampling(max_tokens=2))[0]
    hit = model.chat(CONVS[:1], Sampling(max_tokens=2))[0]
    assert hit == Completion(fresh.text, fresh.finish_reason, fresh.prompt_tokens,
                             fresh.completion_tokens, cached=True)



def send_completion(handler: object, content: str) -> None:
    """Answer an OpenAI-style chat request with one completion of ``content``."""
    body = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                       "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 1,
                                 "total_tokens": 6}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)

class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 twice, then a chat completion; records the Authorization header."""

    calls = 0
    auth: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        type(self).calls += 1
        type(self).auth.append(self.headers.get("Authorization", ""))
        self.rfile.read(int(self.headers["Content-Length"]))
        if type(self).calls <= 2:
            self.send_response(503)
            self.send_header("Retry-After-Ms", "20")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        send_completion(self, "hi")

    def log_message(self, *args: object) -> None:
        pass


def test_openai_retries_5xx_and_sends_key(monkeypatch) -> None:
    monkeypatch.setenv("BV_TEST_KEY", "sk-secret-123")
    _Flaky.calls, _Flaky.auth = 0, []
    server = HTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        model = build_chat_model("openai", model="m", api_key_env="BV_TEST_KEY",
                                 base_url=f"http://127.0.0.1:{server.server_port}/v1")
        out = model.chat(CONVS[:1], Sampling(max_tokens=4))
    finally:
        server.shutdown()
    assert out == [Completion("hi", "stop", 5, 1)]
    assert _Flaky.calls == 3 and set(_Flaky.auth) == {"Bearer sk-secret-123"}
    assert "sk-secret" not in repr(vars(model))


def test_openai_unreachable_server_fails_fast_with_hint(monkeypatch) -> None:
    monkeypatch.setenv("BV_TEST_KEY", "sk-secret-456")
    model = build_chat_model("openai", model="m", base_url="http://127.0.0.1:9/v1",
                             api_key_env="BV_TEST_KEY", max_retries=1)
    with pytest.raises(RuntimeError, match="127.0.0.1:9/v1: chat failed after 1 retries.*base_url"
                       ) as err:
        model.chat(CONVS[:1], Sampling())
    assert "sk-secret" not in str(err.value)


def test_vllm_backend_without_vllm_says_how_to_get_it() -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here; tests/test_llm_vllm.py covers the backend")
    with pytest.raises(RuntimeError, match="setup_vllm_cpu.sh"):
        build_chat_model("vllm", model="some/model")


def test_embedded_name_typo_is_an_error() -> None:
    from benevaudit.llm.gguf import resolve_model

    assert resolve_model("some/hub-id") == "some/hub-id"
    with pytest.raises(ValueError, match="embedded:smollm2"):
        resolve_model("embedded:smollm3")


CONF = Path(__file__).resolve().parents[1] / "conf" / "llm"


@pytest.mark.parametrize("path", sorted(CONF.glob("*.yaml")), ids=lambda p: f"llm/{p.name}")
def test_llm_config_fits_its_backend(path: Path) -> None:
    from omegaconf import OmegaConf

    assert path.read_text().startswith("# "), "first line says what the option is for"
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    assert cfg["backend"] == path.stem
    params = inspect.signature(backend_class(path.stem).__init__).parameters
    unknown = set(cfg) - {"backend", "cache"} - set(params)
    assert not unknown, f"{path.name}: keys the backend does not take: {sorted(unknown)}"


def test_scripted_config_builds() -> None:
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(CONF / "scripted.yaml"), resolve=True)
    model = build_chat_model(**cfg)
    assert model.chat(CONVS[:1], Sampling(max_tokens=4))[0].completion_tokens <= 4


# ---- per-request seeds and the system-role rule --------------------------------------------------

def test_request_seed_depends_on_the_request_and_the_run_seed() -> None:
    from benevaudit.llm.base import request_seed

    a, b = CONVS[0], [{"role": "user", "content": "something else"}]
    assert request_seed(a, 0) == request_seed(list(a), 0)  # a pure function of its inputs
    assert len({request_seed(a, 0), request_seed(a, 1), request_seed(b, 0)}) == 3
    assert 0 <= request_seed(a, 123) < 2**31
    replies = ScriptedChatModel().chat([a, b], Sampling(temperature=0.6, seed=5))
    assert [r.seed for r in replies] == [request_seed(a, 5), request_seed(b, 5)]
    assert ScriptedChatModel().chat([a], Sampling())[0].seed is None  # greedy: no seed


MISTRAL_V02_TEMPLATE = (  # mistralai/Mistral-7B-Instruct-v0.2's chat_template
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant "
    "roles are supported!') }}{% endif %}{% endfor %}")
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def word_tokenizer(template: str):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<s>": 1, "</s>": 2}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")
    fast.chat_template = template
    return fast


def test_system_text_is_folded_only_where_the_template_has_no_system_role() -> None:
    from benevaudit.llm.prompting import accepts_system, render_prompt

    conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]
    mistral, chatml = word_tokenizer(MISTRAL_V02_TEMPLATE), word_tokenizer(CHATML)
    assert not accepts_system(mistral) and accepts_system(chatml)
    assert render_prompt(mistral, conv) == "<s>[INST] Be brief.\n\nHi there [/INST]"
    assert render_prompt(chatml, conv).startswith("<|im_start|>system\nBe brief.<|im_end|>")
    with pytest.raises(Exception, match="roles must alternate"):  # what folding avoids
        mistral.apply_chat_template(conv, tokenize=False)


def test_generator_and_judge_prompts_reach_mistral_folded_as_one_rule() -> None:
    """The generator's own folding (system_in_user) and the LLM layer's give the same prompt;
    a judge's system turn is folded the same way."""
    from benevaudit.detectors.judge_prompts import SYSTEM, judge_prompt
    from benevaudit.generation.prompts import build_prompt
    from benevaudit.llm.prompting import render_prompt
    from benevaudit.schema import Dialogue, Turn

    from benevaudit.generation.grid import iter_conditions

    mistral = word_tokenizer(MISTRAL_V02_TEMPLATE)
    cond = next(iter(iter_conditions(limit=1)))
    assert render_prompt(mistral, build_prompt(cond, 12)) == \
        render_prompt(mistral, build_prompt(cond, 12, system_in_user=True))
    d = Dialogue("d", "N", "mental_health", "s", {"age": "elder", "gender": "female",
                                                   "race": "Black", "ability": "none"}, None,
                 (Turn("user", "hi"), Turn("agent", "hello")))
    rendered = render_prompt(mistral, judge_prompt(d, "plain", True))
    assert rendered.startswith("<s>[INST] " + SYSTEM + "\n\nClassify how the AGENT")


class _Recorder(BaseHTTPRequestHandler):
    """Answers every chat completion with "ok" and records the JSON bodies."""

    bodies: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        type(self).bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        send_completion(self, "ok")

    def log_message(self, *args: object) -> None:
        pass


def test_openai_sends_each_requests_seed_and_folds_on_request() -> None:
    from benevaudit.llm.base import request_seed

    _Recorder.bodies = []
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    try:
        model = build_chat_model("openai", model="m", fold_system=True, concurrency=1,
                                 base_url=f"http://127.0.0.1:{server.server_port}/v1")
        out = model.chat([conv, CONVS[0]], Sampling(temperature=0.6, top_p=0.9, seed=11))
    finally:
        server.shutdown()
    assert [b["seed"] for b in _Recorder.bodies] == [request_seed(conv, 11),
                                                      request_seed(CONVS[0], 11)]
    assert [o.seed for o in out] == [b["seed"] for b in _Recorder.bodies]
    assert _Recorder.bodies[0]["messages"] == [{"role": "user", "content": "Be brief.\n\nHi"}]


def test_a_null_block_cache_writes_and_reads_no_cache_file(tmp_path) -> None:
    """``cache: null`` in an llm block turns the request cache off, also when the run has one;
    a block that names a file is cached there, and a block without the key at the run's."""
    from benevaudit.llm import build_from_block

    run_cache, own = tmp_path / "run.sqlite", tmp_path / "own.sqlite"
    block = {"backend": "scripted", "model": "scripted"}
    off = build_from_block({**block, "cache": None}, cache=run_cache)
    assert isinstance(off.model, ScriptedChatModel) and off.cache is None
    off.chat(CONVS, Sampling(seed=1))
    assert not any(c.cached for c in off.chat(CONVS, Sampling(seed=1)))
    assert off.chat_calls == 2 and not tmp_path.joinpath("run").exists()
    on = build_from_block({**block, "cache": str(own)}, cache=run_cache)
    first = on.chat(CONVS, Sampling(seed=1))
    again = build_from_block({**block, "cache": str(own)}).chat(CONVS, Sampling(seed=1))
    assert (tmp_path / "own").is_dir() and not (tmp_path / "run").exists()
    assert not any(c.cached for c in first) and all(c.cached for c in again)
    assert [c.text for c in again] == [c.text for c in first]
    build_from_block(block, cache=run_cache).chat(CONVS, Sampling(seed=1))
    assert (tmp_path / "run").is_dir()


@pytest.mark.parametrize("overrides, expected", [
    ([], "{cache_dir}/llm/requests"),
    (["llm_cache={tmp}/r.sqlite"], "{tmp}/r.sqlite"),
    (["llm_cache=null"], None),
    (["generator.llm.cache=null"], None),
])
def test_a_generator_block_caches_where_the_run_says(tmp_path, overrides, expected) -> None:
    """The llm group's ``cache`` follows the run's ``llm_cache``; either set to null turns the
    generator's request cache off."""
    from hydra import compose, initialize_config_dir

    conf = Path(__file__).resolve().parents[1] / "conf"
    with initialize_config_dir(str(conf), version_base="1.3"):
        cfg = compose("generate", overrides=["generator=smollm2", f"paths.root_dir={tmp_path}",
                                             *[o.format(tmp=tmp_path) for o in overrides]])
    want = expected and expected.format(tmp=tmp_path, cache_dir=cfg.paths.cache_dir)
    assert cfg.generator.llm.cache == want
