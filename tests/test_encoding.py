"""Rendering and tokenisation: one line per message, 512-token cap, head-and-tail truncation."""

import pytest

from benevaudit.encoders.encoding import encode_texts, head_tail, pad_batch
from benevaudit.encoders.models import load_tokenizer
from benevaudit.schema import Turn
from benevaudit.text import MASK_TOKEN, render_turns, word_spans


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer("packaged:minilm")


def test_render_one_line_per_message():
    text = render_turns([Turn("user", "I feel\n low."), Turn("agent", "Let's talk.")])
    assert text == "[user]: I feel low.\n[agent]: Let's talk."


def test_word_spans_point_into_rendered_text():
    turns = [Turn("user", "Hi there!"), Turn("agent", "Don't worry, dear.")]
    text = render_turns(turns)
    spans = word_spans(turns)
    assert [text[s.start:s.end] for s in spans] == [s.word for s in spans]
    assert [s.word for s in spans if s.speaker == "agent"] == ["Don't", "worry", ",", "dear", "."]


def test_head_tail_slices():
    assert head_tail(10, 20, 4) == (slice(0, 10), slice(10, 10))
    h, t = head_tail(1000, 510, 128)
    assert (h.stop - h.start) + (t.stop - t.start) == 510 and t.stop == 1000


def test_truncation_keeps_head_and_tail(tok):
    long = " ".join(f"w{i}" for i in range(2000))
    enc = encode_texts(tok, ["START " + long + " FINISH", "short one"], max_length=512, head_tokens=128)
    ids = enc.input_ids[0]
    assert len(ids) == 512 and ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    pieces = tok.convert_ids_to_tokens(ids)
    assert pieces[1] == "start" and pieces[-2] == "finish"
    assert len(enc.input_ids[1]) < 10


def test_mask_token_is_one_piece_and_padding_is_dynamic(tok):
    enc = encode_texts(tok, [f"[agent]: {MASK_TOKEN} hi", "a b c d e f"], 512, 128)
    assert tok.convert_tokens_to_ids(MASK_TOKEN) in enc.input_ids[0]
    batch = pad_batch(enc.input_ids, tok.pad_token_id)
    assert batch["input_ids"].shape[1] == max(map(len, enc.input_ids))
    assert batch["attention_mask"].sum().item() == sum(map(len, enc.input_ids))
