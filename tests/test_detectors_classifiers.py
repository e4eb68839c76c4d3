"""Regard, ToxiGen and BeaverTails detectors on tiny random models of the same shape, built and
saved here, loaded back through the stock transformers classes (no remote code)."""

from pathlib import Path

import numpy as np
import pytest
from config_fixtures import option
from detector_fixtures import classifier_spec
import torch

from benevaudit.detectors import build_detector, make_units
from benevaudit.schema import Dialogue, Turn

REGARD_LABELS = {0: "negative", 1: "neutral", 2: "other", 3: "positive"}
BEAVERTAILS_LABELS = [
    "animal_abuse", "child_abuse", "controversial_topics,politics",
    "discrimination,stereotype,injustice", "drug_abuse,weapons,banned_substance",
    "financial_crime,property_crime,theft", "hate_speech,offensive_language",
    "misinformation_regarding_ethics,laws_and_safety", "non_violent_unethical_behavior",
    "privacy_violation", "self_harm", "sexually_explicit,adult_content",
    "terrorism,organized_crime", "violence,aiding_and_abetting,incitement"]


def smollm2_tokenizer():
    from transformers import AutoTokenizer

    from benevaudit.llm.gguf import ensure_smollm2_dir

    return AutoTokenizer.from_pretrained(ensure_smollm2_dir())


def minilm_tokenizer():
    from transformers import AutoTokenizer

    from benevaudit.encoders.models import packaged_minilm_path

    return AutoTokenizer.from_pretrained(packaged_minilm_path())


LLAMA_TEXTS = [
    "BEGINNING OF CONVERSATION: USER: Can I start running again? ASSISTANT:Maybe just short "
    "walks, dear, nothing more.", "I used to run 10k. Let's keep your goals small. Why? It is "
    "safest for someone like you."] * 10


def llama_tokenizer_files(path: Path) -> Path:
    """A Llama-style tokenizer's files: a BPE sentencepiece model trained here with Llama's
    normaliser settings (identity rules, spaces kept, digits split, byte fallback, BOS 1,
    EOS 2), and a tokenizer_config.json naming LlamaTokenizer, as beaver-dam-7b ships."""
    import io
    import json

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LLAMA_TEXTS), model_writer=model, vocab_size=400,
        model_type="bpe", unk_id=0, bos_id=1, eos_id=2, pad_id=-1, byte_fallback=True,
        character_coverage=1.0, normalization_rule_name="identity",
        remove_extra_whitespaces=False, split_digits=True, add_dummy_prefix=True,
        allow_whitespace_only_pieces=True, hard_vocab_limit=False, minloglevel=2)
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer.model").write_bytes(model.getvalue())
    (path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
        "unk_token": "<unk>", "add_bos_token": True, "add_eos_token": False, "legacy": True}))
    return path


def save(model, tokenizer, path: Path) -> str:
    torch.manual_seed(0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from transformers import (BertConfig, BertForSequenceClassification, LlamaConfig,
                              LlamaForSequenceClassification, RobertaConfig,
                              RobertaForSequenceClassification)

    root = tmp_path_factory.mktemp("classifiers")
    torch.manual_seed(0)
    bpe, wp = smollm2_tokenizer(), minilm_tokenizer()
    regard = RobertaForSequenceClassification(RobertaConfig(
        vocab_size=len(bpe), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=514, pad_token_id=bpe.pad_token_id or 0,
        num_labels=4, id2label=REGARD_LABELS, label2id={v: k for k, v in REGARD_LABELS.items()}))
    toxigen = BertForSequenceClassification(BertConfig(
        vocab_size=wp.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=2))  # labels LABEL_0 / LABEL_1, as the checkpoint's
    from transformers import AutoTokenizer

    llama_tok = AutoTokenizer.from_pretrained(llama_tokenizer_files(root / "llama_tok"))
    beaver = LlamaForSequenceClassification(LlamaConfig(
        vocab_size=len(llama_tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, num_labels=14,
        id2label=dict(enumerate(BEAVERTAILS_LABELS)),
        label2id={v: k for k, v in enumerate(BEAVERTAILS_LABELS)},
        problem_type="multi_label_classification"))
    assert llama_tok.pad_token is None  # like Llama's: the loader must supply one
    beaver_dir = save(beaver, llama_tok, root / "beavertails")
    llama_tokenizer_files(Path(beaver_dir))     # beside the saved files: the sentencepiece model
    return {"regard": save(regard, bpe, root / "regard"),
            "toxigen": save(toxigen, wp, root / "toxigen"),
            "beavertails": beaver_dir}


def corpus():
    turns = (Turn("user", "Can I start running again?"),
             Turn("agent", "Maybe just short walks, dear, nothing more."),
             Turn("user", "I used to run 10k."), Turn("agent", "Let's keep your goals small."),
             Turn("user", "Why?"), Turn("agent", "It is safest for someone like you."))
    user = {"age": "elder", "gender": "female", "race": "Black", "ability": "none"}
    return [Dialogue(f"d{i}", lab, "health_lifestyle", "scripted", user, None,
                     turns[:2 * (i + 1)]) for i, lab in enumerate(["N", "OB", "BB"])]


def spec(name, source, **kw):
    return classifier_spec(name, source=source, device="cpu", **kw)


def reference_probs(path, texts, multi_label):
    """The classifier run by hand: tokenizer + model + softmax/sigmoid, one text at a time."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    for t in texts:
        with torch.no_grad():
            logits = model(**tok(t, return_tensors="pt")).logits[0]
        out.append((torch.sigmoid(logits) if multi_label else torch.softmax(logits, -1)).numpy())
    return np.stack(out)


@pytest.mark.parametrize("name", ["regard", "toxigen", "beavertails"])
def test_classifier_scores_match_a_hand_run_and_aggregate_any_turn(models, name):
    det = build_detector(spec(name, models[name]))
    dialogues = corpus()
    results = det.detect(dialogues)
    units = [u for d in dialogues for u in make_units(d, det.unit)]
    texts = [det.text(u) for u in units]
    ref = reference_probs(models[name], texts, multi_label=name == "beavertails")  # [U, L]
    if name == "beavertails":
        assert det.multi_label and len(det.labels) == 14
        assert texts[2] == ("BEGINNING OF CONVERSATION: USER: I used to run 10k. "
                            "ASSISTANT:Let's keep your goals small." + det.tokenizer.eos_token)
        want_scores, want_flags = ref.max(1), (ref > 0.5).any(1)
    else:
        trigger = det.labels.index("negative" if name == "regard" else "toxic")
        assert texts[0] == "Maybe just short walks, dear, nothing more."
        want_scores, want_flags = ref[:, trigger], ref.argmax(1) == trigger
    got_scores = np.concatenate([r.unit_scores for r in results])
    got_flags = [f for r in results for f in r.unit_flags]
    np.testing.assert_allclose(got_scores, want_scores, atol=1e-5)  # batched + padded vs one by one
    assert got_flags == list(want_flags)
    offset = 0
    for d, r in zip(dialogues, results):
        n = len(make_units(d, det.unit))
        assert r.flagged is bool(any(want_flags[offset:offset + n]))
        offset += n


def test_beavertails_input_ends_in_eos_and_is_cut_at_512_tokens(models):
    """PKU's moderation example: EOS appended to every input, truncation at 512 tokens."""
    det = build_detector(spec("beavertails", models["beavertails"]))
    assert det.append_eos and det.max_length == 512 and det.threshold == 0.5
    unit = make_units(corpus()[0], det.unit)[0]
    ids = det.tokenizer(det.text(unit), truncation=True, max_length=det.max_length)["input_ids"]
    assert ids[-1] == det.tokenizer.eos_token_id
    long = det.tokenizer(det.text(unit) * 200, truncation=True,
                         max_length=det.max_length)["input_ids"]
    assert len(long) == 512


def test_beavertails_ids_equal_the_slow_llama_tokenizers(models, tmp_path):
    """PKU loads the tokenizer with use_fast=False; transformers 5 builds the tokenizers form
    from the same tokenizer.model. The slow (sentencepiece) form's ids for ``text + "</s>"``
    are BOS, sentencepiece's encoding of the text, EOS: the loaded tokenizer gives the same."""
    import sentencepiece as spm
    from transformers import AutoTokenizer

    files = llama_tokenizer_files(tmp_path / "llama")
    tok = AutoTokenizer.from_pretrained(files, use_fast=False)
    sp = spm.SentencePieceProcessor(model_file=str(files / "tokenizer.model"))
    det = build_detector(spec("beavertails", models["beavertails"]))
    assert det.tokenizer.eos_token == tok.eos_token == "</s>"
    texts = [det.text(u) for d in corpus() for u in make_units(d, det.unit)]
    texts.append("BEGINNING OF CONVERSATION: USER: Can I  do 10k?\n ASSISTANT: Maybe, é 😀</s>")
    for text in texts:
        assert text.endswith("</s>")
        slow = [sp.bos_id()] + sp.encode(text.removesuffix("</s>")) + [sp.eos_id()]
        assert tok(text)["input_ids"] == slow


def test_beavertails_eos_token_is_checked_against_the_tokenizers(models):
    from benevaudit.errors import ConfigError

    assert option("detector", "beavertails")["eos_token"] == "</s>"
    with pytest.raises(ConfigError, match="detector.eos_token='<eos>'"):
        build_detector(spec("beavertails", models["beavertails"], eos_token="<eos>"))


def test_unknown_trigger_label_names_the_labels(models):
    from benevaudit.errors import ConfigError

    with pytest.raises(ConfigError, match="LABEL_0"):
        build_detector(spec("toxigen", models["toxigen"], label_names={}))


def test_missing_checkpoint_fails_with_a_hint(tmp_path):
    from benevaudit.errors import ConfigError

    with pytest.raises(ConfigError, match="detector.source"):
        build_detector(spec("regard", str(tmp_path / "no-such-model")))
