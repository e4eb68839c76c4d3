"""Invariants of the text interventions, checked against plain-Python reference edits."""

from __future__ import annotations

import random
import re
from collections import Counter

import pyarrow as pa
import pytest

from benevaudit.audit.interventions import INTERVENTIONS, code_for, run_interventions
from benevaudit.audit.lexicon import lexicon_from_ranked
from benevaudit.schema import ARROW_SCHEMA
from benevaudit.text import MASK_TOKEN, WORD_RE
from config_fixtures import step

LEXICON = lexicon_from_ranked({
    "N": [("together", 1.0), ("you", 0.5)],
    "OB": [("must", 1.0), ("simply", 0.9)],
    "BB": [("sweetie", 1.0), ("dear", 0.8), ("!", 0.5)],
})
CUES = {"together", "you", "must", "simply", "sweetie", "dear", "!"}


def table(rows: list[tuple[str, str | None, list[tuple[str, str]]]]) -> pa.Table:
    return pa.Table.from_pylist([
        {"id": i, "label": label, "role": "mental_health", "generator": "test",
         "user": {"age": "young", "gender": "female", "race": "Black", "ability": "none"},
         "agent": None, "turns": [{"speaker": s, "text": t} for s, t in turns]}
        for i, label, turns in rows], schema=ARROW_SCHEMA)


def texts(t: pa.Table) -> list[list[tuple[str, str]]]:
    return [[(x["speaker"], x["text"]) for x in turns] for turns in t.column("turns").to_pylist()]


def ipc_bytes(t: pa.Table) -> bytes:
    """The table's bytes in one Arrow IPC record batch (so chunking does not count)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t.combine_chunks())
    return sink.getvalue().to_pybytes()


# ---- independent reference implementations (token by token, Python re) ----

AFFECTIVE = set("!?,;:\"“”„‟‘‚‛«»…—―‒'’-‐‑–")
JOINERS = set("'’-‐‑–")


def _is_word_char(c: str) -> bool:
    return bool(re.match(r"\w", c))


def ref_punct(text: str) -> str:
    toks = [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(text)]

    def kind(k: int) -> str | None:
        s, e, w = toks[k]
        if w == ".":
            return "dot"
        if w not in AFFECTIVE:
            return None
        if w in JOINERS and s > 0 and e < len(text) and _is_word_char(text[s - 1]) \
                and _is_word_char(text[e]):
            return None
        return "aff"

    out, pos, k = [], 0, 0
    while k < len(toks):
        if kind(k) is None:
            k += 1
            continue
        j, kinds = k, [kind(k)]
        while j + 1 < len(toks) and toks[j + 1][0] == toks[j][1] and kind(j + 1):
            j += 1
            kinds.append(kind(j))
        if "aff" in kinds or kinds.count("dot") >= 2:
            out += [text[pos:toks[k][0]], "."]
            pos = toks[j][1]
        k = j + 1
    return "".join(out) + text[pos:]


def ref_mask(text: str, cues: set[str]) -> str:
    return WORD_RE.sub(lambda m: MASK_TOKEN if m.group().lower() in cues else m.group(), text)


def random_text(rng: random.Random) -> str:
    pieces = ["you", "You", "don't", "O'Neil", "well-being", "3–5", "sweetie", "dear", "must",
              "café", "e\u0301", "x²", "_a", "'", "’", "\"", "“", "”", "-", "--", "—", "–", "!",
              "?", "?!", ",", ";", ":", ".", "..", "...", "…", "«", "»", " ", " ", " ", "  ",
              "\t", "\u00a0", "\x1c", "[unused0]", "dogs'", "'quote'", "a-b-c", "rock'n'roll"]
    return "".join(rng.choice(pieces) + rng.choice(["", " ", " ", ""]) for _ in range(rng.randint(0, 14)))


def random_table(n: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    return table([(f"d{i}", rng.choice(["N", "OB", "BB"]),
                   [(rng.choice(["user", "agent"]), random_text(rng)) for _ in range(rng.randint(1, 4))])
                  for i in range(n)])


# ---- P ----

def test_punct_hand_cases() -> None:
    t = table([("a", "BB", [("user", "Really?! I can't... do it—ever"),
                            ("agent", "Oh, sweetie! \"Well-being\" matters: it's 3–5 days - okay…")])])
    out, stats = run_interventions(t, [("punct", step("punct"))], None, seed=0)
    assert texts(out) == [[("user", "Really. I can't. do it.ever"),
                           ("agent", "Oh. sweetie. .Well-being. matters. it's 3–5 days . okay.")]]
    assert stats["intervention/punct_replaced"] == 10


def test_punct_matches_reference_and_changes_no_word() -> None:
    t = random_table(400, seed=1)
    out, _ = run_interventions(t, [("punct", step("punct"))], None, seed=0, batch_size=64)
    for before, after in zip(texts(t), texts(out)):
        for (s0, x0), (s1, x1) in zip(before, after, strict=True):
            assert s0 == s1 and x1 == ref_punct(x0), repr(x0)
            keep = [w for w in WORD_RE.findall(x0) if _is_word_char(w[0]) or w == MASK_TOKEN]
            assert [w for w in WORD_RE.findall(x1) if _is_word_char(w[0]) or w == MASK_TOKEN] == keep


# ---- M and the random-mask control ----

def test_mask_hand_case_touches_agent_turns_only() -> None:
    t = table([("a", "N", [("user", "You must go, dear!"),
                           ("agent", "Sweetie, don't worry: you you're fine! YOU too. dearest")])])
    out, stats = run_interventions(t, [("mask", step("mask"))], LEXICON, seed=0)
    m = MASK_TOKEN
    assert texts(out) == [[("user", "You must go, dear!"),
                           ("agent", f"{m}, don't worry: {m} you're fine{m} {m} too. dearest")]]
    assert stats["intervention/masked_words"] == 4


def test_mask_matches_reference_on_random_text() -> None:
    t = random_table(400, seed=2)
    out, stats = run_interventions(t, [("mask", step("mask"))], LEXICON, seed=0, batch_size=50)
    masked = 0
    for before, after in zip(texts(t), texts(out)):
        for (s, x0), (_, x1) in zip(before, after, strict=True):
            assert x1 == (ref_mask(x0, CUES) if s == "agent" else x0), repr(x0)
            if s == "agent":
                masked += sum(w.lower() in CUES for w in WORD_RE.findall(x0))
    assert stats["intervention/masked_words"] == masked


def test_mask_k_limits_the_lexicon() -> None:
    t = table([("a", "N", [("agent", "you together dear sweetie")])])
    out, _ = run_interventions(t, [("mask", {**step("mask"), "k": 1})], LEXICON, seed=0)
    assert texts(out)[0][0][1] == f"you {MASK_TOKEN} dear {MASK_TOKEN}"


def _agent_corpus(n: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    filler = ["plan", "step", "today", "maybe", "try", "a", "small", "walk", "calm", "breathe"]
    rows = []
    for i in range(n):
        turns = []
        for _ in range(3):
            turns.append(("user", "I feel stuck, honestly."))
            ws = [rng.choice(["you", "must", "dear"]) if rng.random() < 0.2 else rng.choice(filler)
                  for _ in range(rng.randint(6, 20))]
            turns.append(("agent", " ".join(ws) + rng.choice([".", "!", "?"])))
        rows.append((f"d{i}", ["N", "OB", "BB"][i % 3], turns))
    return table(rows)


def test_random_mask_masks_as_many_non_cue_words_as_mask() -> None:
    t = _agent_corpus(120, seed=3)
    masked_m, _ = run_interventions(t, [("mask", step("mask"))], LEXICON, seed=0)
    masked_r, stats = run_interventions(t, [("random_mask", step("random_mask"))], LEXICON, seed=5, batch_size=16)
    shortfall = 0
    for before, m_turns, r_turns in zip(texts(t), texts(masked_m), texts(masked_r)):
        for (s, x0), (_, xm), (_, xr) in zip(before, m_turns, r_turns, strict=True):
            w0, wr = WORD_RE.findall(x0), WORD_RE.findall(xr)
            assert len(w0) == len(wr)
            hits = [i for i, (a, b) in enumerate(zip(w0, wr)) if a != b]
            assert all(wr[i] == MASK_TOKEN and w0[i].lower() not in CUES for i in hits)
            quota = WORD_RE.findall(xm).count(MASK_TOKEN)
            eligible = sum(_is_word_char(w[0]) and w.lower() not in CUES for w in w0)
            assert len(hits) == min(quota, eligible)
            shortfall += quota - len(hits)
            if s == "user":
                assert xr == x0
    assert stats["intervention/random_mask_shortfall"] == shortfall < 20
    assert stats["intervention/masked_words"] > 300
    again, _ = run_interventions(t, [("random_mask", step("random_mask"))], LEXICON, seed=5, batch_size=1000)
    assert ipc_bytes(again) == ipc_bytes(masked_r)


# ---- SH ----

def test_shuffle_keeps_token_multisets_and_turns() -> None:
    t = random_table(300, seed=4)
    out, _ = run_interventions(t, [("shuffle", step("shuffle"))], None, seed=7, batch_size=33)
    changed = 0
    for before, after in zip(texts(t), texts(out)):
        assert [s for s, _ in before] == [s for s, _ in after]
        for (_, x0), (_, x1) in zip(before, after, strict=True):
            assert Counter(x0.split()) == Counter(x1.split())
            assert x1 == " ".join(x1.split())
            changed += x1 != " ".join(x0.split())
    assert changed > 100
    other, _ = run_interventions(t, [("shuffle", step("shuffle"))], None, seed=8)
    assert ipc_bytes(other) != ipc_bytes(out)


# ---- determinism, over every intervention ----

@pytest.mark.parametrize("name", sorted(INTERVENTIONS))
def test_same_seed_same_bytes_whatever_the_batching(name: str) -> None:
    t = _agent_corpus(60, seed=6)
    steps = ([("punct", step("punct")), (name, step(name))] if name in ("freq_norm", "sym_inject")
             else [(name, step(name))])
    a, stats_a = run_interventions(t, steps, LEXICON, seed=11, batch_size=7)
    b, stats_b = run_interventions(t, steps, LEXICON, seed=11, batch_size=4096)
    assert ipc_bytes(a) == ipc_bytes(b) and stats_a == stats_b
    assert a.schema == t.schema and a.column("id").equals(t.column("id"))


# ---- F ----

def _skewed_corpus(n: int, seed: int) -> pa.Table:
    """Agent turns whose cue rates differ by class; 'sweetie' only ever opens a BB turn."""
    rng = random.Random(seed)
    rates = {"N": {"together": 0.6, "you": 1.0}, "OB": {"must": 1.2, "you": 2.0},
             "BB": {"sweetie": 0.5, "you": 1.5}}
    filler = "we can look at a plan for this week and see what fits".split()
    rows = []
    for i in range(n):
        label = ["N", "OB", "BB"][i % 3]
        turns = []
        for _ in range(4):
            ws = [rng.choice(filler) for _ in range(rng.randint(5, 12))]
            for cue, rate in rates[label].items():
                if cue == "sweetie":
                    continue
                for _ in range(int(rate) + (rng.random() < rate % 1)):
                    ws.insert(rng.randint(0, len(ws)), cue)
            text = " ".join(ws) + rng.choice([". That is fine!", ".", "?"])
            if label == "BB" and rng.random() < rates["BB"]["sweetie"]:
                text = "sweetie " + text
            turns += [("user", "What should I do?"), ("agent", text)]
        rows.append((f"d{i}", label, turns))
    return table(rows)


def _freq(t: pa.Table, cue: str) -> dict[str, float]:
    hits, n = Counter(), Counter()
    for label, turns in zip(t.column("label").to_pylist(), texts(t)):
        for s, x in turns:
            if s == "agent":
                n[label] += 1
                hits[label] += sum(w.lower() == cue for w in WORD_RE.findall(x))
    return {c: hits[c] / n[c] for c in n}


def test_freq_norm_equalises_cue_frequencies_across_classes() -> None:
    t = _skewed_corpus(3000, seed=9)                        # 4,000 agent turns per class
    lexicon = lexicon_from_ranked({"N": [("together", 1.0), ("you", 0.5)],
                                   "OB": [("must", 1.0)], "BB": [("sweetie", 1.0)]})
    out, stats = run_interventions(t, [("punct", step("punct")), ("freq_norm", step("freq_norm"))], lexicon, seed=3)
    for cue in ("together", "you", "must", "sweetie"):
        before, after = _freq(t, cue), _freq(out, cue)
        assert max(before.values()) - min(before.values()) > 0.4
        assert max(after.values()) - min(after.values()) < 0.05, (cue, after)
        assert after[max(before, key=before.get)] == pytest.approx(max(before.values()))
    assert stats["intervention/inserted_words_per_agent_turn_OB"] == pytest.approx(
        (0.6 - 0.0) + (0.5 - 0.0) + 0.0, abs=0.05)
    for label, turns in zip(out.column("label").to_pylist(), texts(out)):
        for s, x in turns:
            words = [w.lower() for w in WORD_RE.findall(x)]
            if s == "agent" and label != "BB" and "sweetie" in words:
                opening = words[:words.index("sweetie")]        # other cues inserted there too
                assert set(opening) <= {"together", "you", "must"} and words.count("sweetie") == 1


def test_punct_fold_apostrophes_is_the_study_literal_reading() -> None:
    t = table([("d0", "BB", [("agent", "I don't know, it's 'fine' — O’Neil’s well-being!")])])
    kept, stats = run_interventions(t, [("punct", step("punct"))], None, seed=0)
    folded, stats_all = run_interventions(t, [("punct", {**step("punct"), "fold_apostrophes": True})], None, seed=0)
    assert texts(kept)[0][0][1] == "I don't know. it's .fine. . O’Neil’s well-being."
    assert texts(folded)[0][0][1] == "I don.t know. it.s .fine. . O.Neil.s well-being."
    assert stats_all["intervention/punct_replaced"] - stats["intervention/punct_replaced"] == 4


# ---- S ----

def test_sym_inject_inserts_the_stated_count_from_the_other_lexicons() -> None:
    lengths = [9, 10, 29, 30, 50, 250, 1]                   # round half up, capped at 10
    expected = [0, 1, 1, 2, 3, 10, 0]
    rows = [(f"d{i}", label, [("user", "hi there"),
                              ("agent", " ".join(["word"] * (n - 1)) + " end" if n > 1 else "end")])
            for i, n in enumerate(lengths) for label in ("N", "OB", "BB")]
    t = table(rows)
    folded, _ = run_interventions(t, [("punct", step("punct"))], None, seed=0)
    out, stats = run_interventions(t, [("punct", step("punct")), ("sym_inject", step("sym_inject"))], LEXICON, seed=2)
    pools = {c: set(w for o in ("N", "OB", "BB") if o != c for w in LEXICON.top(o))
             for c in ("N", "OB", "BB")}
    for (_, label, _), before, after, want in zip(rows, texts(folded), texts(out),
                                                  [e for e in expected for _ in range(3)]):
        assert before[0] == after[0]                        # user turn untouched
        added = Counter(WORD_RE.findall(after[1][1])) - Counter(WORD_RE.findall(before[1][1]))
        assert sum(added.values()) == want
        assert set(added) <= pools[label], (label, added)
    assert stats["intervention/inserted_words"] == 3 * sum(expected)


def test_sym_inject_length_counts_words_not_punctuation() -> None:
    """L is the turn's words: 29 words and 29 periods give round(0.05 * 29) = 1, not 3."""
    rows = [(f"d{c}", c, [("agent", " ".join(["word ."] * 29))]) for c in ("N", "OB", "BB")]
    t = table(rows)
    out, stats = run_interventions(t, [("punct", step("punct")), ("sym_inject", step("sym_inject"))], LEXICON, seed=5)
    for before, after in zip(texts(t), texts(out)):
        added = Counter(WORD_RE.findall(after[0][1])) - Counter(WORD_RE.findall(before[0][1]))
        assert sum(added.values()) == 1
    assert stats["intervention/inserted_words"] == 3


# ---- the runner ----

def test_runner_errors_name_what_to_fix() -> None:
    t = _agent_corpus(3, seed=0)
    with pytest.raises(ValueError, match="valid names: .*random_mask"):
        run_interventions(t, [("masking", {})], LEXICON, seed=0)
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['top'\]; valid: \['k'\]"):
        run_interventions(t, [("mask", {**step("mask"), "top": 3})], LEXICON, seed=0)
    with pytest.raises(ValueError, match=r"parameter\(s\) \['k'\] missing; its "
                                         r"conf/intervention/mask.yaml gives them"):
        run_interventions(t, [("mask", {})], LEXICON, seed=0)
    with pytest.raises(ValueError, match=r"lexicon.path=<cue_lexicon.json>"):
        run_interventions(t, [("freq_norm", step("freq_norm"))], None, seed=0)
    with pytest.raises(ValueError, match="field 'turns'"):
        run_interventions(t.drop_columns(["turns"]), [("punct", step("punct"))], None, seed=0)


@pytest.mark.parametrize("name", sorted(INTERVENTIONS))
def test_an_empty_table_stays_empty(name: str) -> None:
    empty = table([])
    out, stats = run_interventions(empty, [(name, step(name))], LEXICON, seed=0)
    assert out.num_rows == 0 and out.schema == empty.schema and stats["intervention/turns"] == 0


def test_none_is_the_identity_and_codes_join() -> None:
    t = _agent_corpus(5, seed=0)
    out, stats = run_interventions(t, [], None, seed=0)
    assert out.equals(t) and stats["intervention/changed_turns"] == 0
    assert code_for([("punct", step("punct")), ("freq_norm", step("freq_norm")), ("shuffle", step("shuffle"))]) == "P+F+SH"
    assert code_for([]) == "—"
