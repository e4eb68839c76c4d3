"""The hf backend's shared-prefix reuse: context units of one dialogue give the same label
scores as prompt-by-prompt scoring while computing far fewer prompt tokens."""

import numpy as np

from benevaudit.detectors import make_units
from benevaudit.detectors.guards.granite_guardian33 import granite_guardian_prompt
from benevaudit.schema import Dialogue, Turn


def four_exchanges(user: str, agent: str) -> Dialogue:
    """A BB dialogue of four user/agent exchanges, ``{i}`` numbering each."""
    turns = []
    for i in range(4):
        turns += [Turn("user", user.format(i=i)), Turn("agent", agent.format(i=i))]
    return Dialogue("d", "BB", "health_lifestyle", "scripted",
                    {"age": "elder", "gender": "male", "race": "White", "ability": "none"}, None,
                    tuple(turns))


def test_prefix_reuse_matches_full_prefill_with_fewer_tokens():
    from benevaudit.llm.hf import HFChatModel

    d = four_exchanges("Could I try exercise plan {i}?",
                       "Plan {i} may be too much for you; rest instead.")
    convs = [granite_guardian_prompt(u.turns) for u in make_units(d, "context")]
    choices = ["<score> yes", "<score> no"]
    reuse = HFChatModel(threads=1)
    fresh = HFChatModel(threads=1, prefix_reuse=False)
    got, want = reuse.score(convs, choices), fresh.score(convs, choices)  # [4, 2]
    np.testing.assert_allclose(got, want, atol=2e-3)
    assert fresh.prefill_tokens == fresh.prompt_tokens == reuse.prompt_tokens
    # each turn's prompt extends the previous one: only its new turns and the protocol are run
    assert reuse.prefill_tokens < 0.7 * reuse.prompt_tokens
    # a second pass over the first prompt finds it cached except its last token
    before = reuse.prefill_tokens
    again = reuse.score(convs[-1:], choices)
    assert reuse.prefill_tokens - before == 1
    np.testing.assert_allclose(again, want[-1:], atol=2e-3)


def test_greedy_chat_reuses_the_previous_prompt_and_keeps_its_replies():
    """A generate-mode guard over context units: greedy replies from one-at-a-time decoding
    on the reused prefix equal those of padded batches, with fewer prompt tokens run."""
    from benevaudit.detectors.guards.qwen3guard import qwen3guard_prompt
    from benevaudit.llm import Sampling
    from benevaudit.llm.hf import HFChatModel

    d = four_exchanges("Can I join climbing class {i}?",
                       "Class {i} is not for someone like you; watch instead.")
    convs = [qwen3guard_prompt(u.turns) for u in make_units(d, "context")]
    greedy = Sampling(temperature=0.0, max_tokens=12)
    reuse = HFChatModel(threads=1, batch_size=1)  # one-at-a-time loses no batching here
    fresh = HFChatModel(threads=1, prefix_reuse=False, batch_size=8)
    got, want = reuse.chat(convs, greedy), fresh.chat(convs, greedy)
    assert [c.text for c in got] == [c.text for c in want]
    assert [c.completion_tokens for c in got] == [c.completion_tokens for c in want]
    assert fresh.prefill_tokens == fresh.prompt_tokens == reuse.prompt_tokens
    assert reuse.prefill_tokens < 0.6 * reuse.prompt_tokens
    # the cache holds exactly the last prompt: scoring it again runs one token
    before = reuse.prefill_tokens
    reuse.score(convs[-1:], ["Safety: Safe", "Safety: Unsafe"])
    assert reuse.prefill_tokens - before == 1
    # the cost rule where caches cannot be padded into a batch (one-at-a-time decoding):
    # repeated prompt tokens against DECODE_STEP_TOKENS per decoding step that batches would
    # share; replies seen so far set the expected length
    from benevaudit.llm.hf_prefix import DECODE_STEP_TOKENS, reuse_pays

    prompts = [list(range(1000 + 100 * k)) for k in range(4)]  # each extends the one before
    shared = 1000 + 1100 + 1200                                 # repeated tokens
    rule = lambda max_tokens, reply=None: reuse_pays(  # noqa: E731
        [], prompts, max_tokens, reply, 4, DECODE_STEP_TOKENS)
    assert rule(shared // (3 * DECODE_STEP_TOKENS) - 1)
    assert not rule(shared // (3 * DECODE_STEP_TOKENS) + 1)
    assert rule(2000, reply=5.0)  # short replies seen: reuse pays even with a large budget
    fresh._prefix, fresh._reply_tokens, fresh.batch_size = None, None, 4
    assert fresh.pads_caches  # SmolLM2's DynamicCache: reused prompts decode in batches,
    assert fresh._reuse_pays(prompts, max_tokens=2000)  # so any repeated prefix pays
    assert not fresh._reuse_pays([[1, 2], [3, 4]], max_tokens=1)  # nothing repeated
    fresh.pads_caches = False  # one at a time: the rule above
    assert fresh._reuse_pays(prompts, max_tokens=shared // (3 * DECODE_STEP_TOKENS) - 1)
    assert not fresh._reuse_pays(prompts, max_tokens=2000)


def test_greedy_chat_decodes_reused_prompts_together_with_the_replies_of_padded_batches():
    """Prompts prefilled one by one on the previous prompt's cache, then decoded as one padded
    batch from their left-padded caches: the replies of plain padded batches, fewer prompt
    tokens run, and the cache left holding the last prompt for the next call."""
    from benevaudit.detectors.guards.qwen3guard import qwen3guard_prompt
    from benevaudit.llm import Sampling
    from benevaudit.llm.hf import HFChatModel

    d = four_exchanges("May I sign up for chess club {i}?",
                       "Club {i} would confuse you at your age; skip it.")
    convs = [qwen3guard_prompt(u.turns) for u in make_units(d, "context")]
    convs += [qwen3guard_prompt(d.turns[:1])]  # shorter than the one before: more padding
    greedy = Sampling(temperature=0.0, max_tokens=12)
    reuse = HFChatModel(threads=1, batch_size=3)   # two batches: the second reuses the first
    reuse.decode_step_tokens = 0                   # reuse whatever the decoding costs
    fresh = HFChatModel(threads=1, prefix_reuse=False, batch_size=5)
    batched = []
    reuse._generate_from_prefix = lambda *a: batched.append(a)  # must not decode one by one
    got, want = reuse.chat(convs, greedy), fresh.chat(convs, greedy)
    assert not batched
    assert [c.text for c in got] == [c.text for c in want]
    assert [c.completion_tokens for c in got] == [c.completion_tokens for c in want]
    assert [c.finish_reason for c in got] == [c.finish_reason for c in want]
    assert reuse.prompt_tokens == fresh.prompt_tokens
    assert reuse.prefill_tokens < 0.75 * reuse.prompt_tokens
    before = reuse.prefill_tokens
    reuse.score(convs[-1:], ["Safety: Safe", "Safety: Unsafe"])
    assert reuse.prefill_tokens - before == 1  # cached: all of the last prompt but its last token
