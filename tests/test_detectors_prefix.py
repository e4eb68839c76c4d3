"""The hf backend's shared-prefix reuse: context units of one dialogue give the same label
scores as prompt-by-prompt scoring while computing far fewer prompt tokens."""

import numpy as np

from benevaudit.detectors import make_units
from benevaudit.detectors.guard_prompts import granite_guardian_prompt
from benevaudit.schema import Dialogue, Turn


def test_prefix_reuse_matches_full_prefill_with_fewer_tokens():
    from benevaudit.llm.hf import HFChatModel

    turns = []
    for i in range(4):
        turns += [Turn("user", f"Could I try exercise plan {i}?"),
                  Turn("agent", f"Plan {i} may be too much for you; rest instead.")]
    d = Dialogue("d", "BB", "health_lifestyle", "scripted",
                 {"age": "elder", "gender": "male", "race": "White", "ability": "none"}, None,
                 tuple(turns))
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
