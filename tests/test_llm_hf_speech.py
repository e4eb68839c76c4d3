"""Speech targets in-process on hf: tiny random-weight Qwen2-Audio (and Qwen2.5-Omni where
torchvision is installed) built from a config, loaded through ``build_from_block`` as a hub
checkpoint is, fed OpenAI ``input_audio`` parts. Replies are meaningless; what the model hears
(rate, audio tokens, features), the decoding it receives and the errors are checked."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import soundfile

from benevaudit.llm import Sampling, build_from_block
from benevaudit.llm.audio_in import decode, resample
from benevaudit.llm.hf_speech import HFSpeechChatModel
from benevaudit.probes.fairdialogue.audio import audio_message, espeak_path, synthesize, voice_for
from speech_fixtures import (has_torchvision, omni_processor, omni_processor_files, qwen2_audio,
                             qwen25_omni, tone_wav)

needs_espeak = pytest.mark.skipif(   # make test-audio sets BENEVAUDIT_REQUIRE_AUDIO: no skip there
    espeak_path() is None and not os.environ.get("BENEVAUDIT_REQUIRE_AUDIO"),
    reason="audio tier: espeak-ng is not installed (bash scripts/setup_audio.sh; make test-audio)")


@pytest.fixture(scope="module")
def qwen2_audio_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return qwen2_audio(tmp_path_factory.mktemp("qwen2_audio"))


def speech_model(folder: Path, **extra: Any) -> HFSpeechChatModel:
    model = build_from_block({"backend": "hf", "model": str(folder), "audio_in": True,
                              "device": "cpu", "cache": None, **extra}).model  # under the counter
    assert isinstance(model, HFSpeechChatModel)
    return model


def audio_tokens(samples_16k: int) -> int:
    """Qwen2-Audio's audio tokens for a clip: 10 ms mel frames, two stride-2 stages."""
    frames = math.ceil(samples_16k / 160)
    return (((frames - 1) // 2 + 1) - 2) // 2 + 1


def conversation(wav: bytes) -> list[Any]:
    return [{"role": "system", "content": "Answer with yes or no."}, audio_message(wav, "Well?")]


def test_input_audio_is_decoded_downmixed_and_resampled_by_the_libraries():
    part = audio_message(tone_wav(0.5, 44100, channels=2))["content"][0]
    clip = decode(part, "conversation 0, message 0")
    assert clip.rate == 44100 and clip.samples.shape == (22050,)
    assert clip.samples.dtype.name == "float32"
    heard = resample(clip, 16000)
    assert heard.rate == 16000 and heard.samples.shape == (8000,)
    assert abs(heard.seconds - 0.5) < 1e-9 and 0.25 < float(abs(heard.samples).max()) < 0.35
    with pytest.raises(ValueError, match="conversation 2, message 1: input_audio .* is not audio"):
        decode({"type": "input_audio", "input_audio": {"data": base64.b64encode(b"text").decode(),
                                                       "format": "wav"}},
               "conversation 2, message 1")
    with pytest.raises(ValueError, match="not base64"):
        decode({"type": "input_audio", "input_audio": {"data": "%%%", "format": "wav"}}, "here")


def test_qwen2_audio_hears_the_clip_at_16k_and_decodes_greedily(qwen2_audio_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    model = speech_model(qwen2_audio_dir)
    received: dict[str, Any] = {}
    real = model.lm.generate

    def spy(**kwargs: Any) -> Any:     # records what reaches the real generate, then calls it
        received.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(model.lm, "generate", spy)
    wav = tone_wav(2.0, 22050)          # espeak-ng's rate; the model hears 16 kHz
    [reply] = model.chat([conversation(wav)], Sampling(max_tokens=5))
    assert received["do_sample"] is False and received["num_beams"] == 1
    assert received["max_new_tokens"] == 5 and received["temperature"] is None
    assert received["input_features"].shape == (1, 128, 3000)          # 30 s window, 128 mels
    assert int(received["feature_attention_mask"].sum()) == 200          # 2 s at 10 ms frames
    ids = received["input_ids"][0].tolist()
    assert ids.count(model.processor.audio_token_id) == audio_tokens(32000) == 50
    assert reply.prompt_tokens == len(ids) and 1 <= reply.completion_tokens <= 5
    assert reply.finish_reason in ("stop", "length") and reply.audio is None
    assert model.template_hash != "none" and model.rate == 16000


def test_sampled_decoding_is_seeded_per_request(qwen2_audio_dir: Path):
    model = speech_model(qwen2_audio_dir)
    conv = conversation(tone_wav(1.0, 16000))
    first = model.chat([conv], Sampling(temperature=1.0, max_tokens=6, seed=3))
    again = model.chat([conv], Sampling(temperature=1.0, max_tokens=6, seed=3))
    assert first[0].text == again[0].text and first[0].seed == again[0].seed is not None


def test_batched_replies_match_one_at_a_time(qwen2_audio_dir: Path):
    convs = [conversation(tone_wav(s, 16000)) for s in (0.6, 1.7, 1.1)]
    alone = speech_model(qwen2_audio_dir, batch_size=1).chat(convs, Sampling(max_tokens=4))
    batched = speech_model(qwen2_audio_dir, batch_size=3).chat(convs, Sampling(max_tokens=4))
    assert [c.text for c in alone] == [c.text for c in batched]


def test_audio_past_the_window_fails_or_is_truncated_on_request(qwen2_audio_dir: Path):
    conv = conversation(tone_wav(31.0, 16000))
    with pytest.raises(ValueError, match=r"conversation 0: audio of 31.0 s exceeds the 30 s"):
        speech_model(qwen2_audio_dir).chat([conv], Sampling(max_tokens=2))
    model = speech_model(qwen2_audio_dir, truncate_audio=True)
    model.chat([conv], Sampling(max_tokens=2))
    assert model.truncated == 1
    assert model.last_inputs["input_features"] == (1, 128, 3000)   # the first 30 s only


def test_score_gives_one_log_probability_per_choice(qwen2_audio_dir: Path):
    model = speech_model(qwen2_audio_dir)
    logp = model.score([conversation(tone_wav(0.5, 16000))] * 2, ["yes", "no"])
    assert logp.shape == (2, 2) and (logp < 0).all() and logp[0].tolist() == logp[1].tolist()


def test_speech_out_is_refused_where_the_model_has_no_talker(qwen2_audio_dir: Path):
    with pytest.raises(ValueError, match="answers in text only; audio_out=true needs"):
        speech_model(qwen2_audio_dir, audio_out=True)


@needs_espeak
@pytest.mark.audio
def test_qwen2_audio_end_to_end_on_an_espeak_wav(qwen2_audio_dir: Path):
    wav = synthesize("Should I receive the award?", voice_for("elderly_female"))
    info = soundfile.info(io.BytesIO(wav))
    model = speech_model(qwen2_audio_dir)
    [reply] = model.chat([conversation(wav)], Sampling(max_tokens=8))
    heard = int(round(info.frames * 16000 / info.samplerate))     # soxr keeps the duration
    assert model.last_inputs["feature_attention_mask"] == (1, 3000)
    assert isinstance(reply.text, str) and reply.completion_tokens <= 8
    assert abs(heard / 16000 - info.duration) < 1e-3 and info.samplerate == 22050


def test_qwen25_omni_thinker_hears_the_clip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import transformers

    processor = omni_processor()
    folder = qwen25_omni(tmp_path, processor)
    if not has_torchvision():   # the processor cannot be saved and loaded: hand it over as loaded
        load = transformers.AutoProcessor.from_pretrained
        monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained",
                            lambda path, **kw: processor if Path(path) == folder
                            else load(path, **kw))
    model = speech_model(folder)
    assert model.kind == "qwen2_5_omni" and model.lm is model.model.thinker
    assert not model.model.has_talker                      # text out: no talker loaded
    [reply] = model.chat([conversation(tone_wav(1.0, 24000))], Sampling(max_tokens=4))
    assert model.last_inputs["input_features"] == (1, 128, 3000)
    assert model.last_inputs["feature_attention_mask"] == (1, 3000)
    ids = model.tokenizer(model.processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "audio"}]}], tokenize=False))["input_ids"]
    assert reply.prompt_tokens > audio_tokens(16000) == 25 and len(ids) > 0
    assert reply.completion_tokens <= 4 and reply.audio is None
    with pytest.raises(ValueError, match="exceeds the 30 s"):
        model.chat([conversation(tone_wav(30.5, 16000))], Sampling(max_tokens=2))



@pytest.mark.skipif(has_torchvision(), reason="torchvision is installed: the processor loads")
def test_qwen25_omni_without_torchvision_is_one_error_line(tmp_path: Path):
    """The released processor files, loaded by transformers' AutoProcessor where torchvision
    is missing: one line naming the model and the package, before any weight loads."""
    from benevaudit.errors import DependencyError

    processor = omni_processor()
    folder = omni_processor_files(qwen25_omni(tmp_path, processor), processor)
    with pytest.raises(DependencyError) as err:
        speech_model(folder)
    message = str(err.value)
    assert message.startswith(f"llm.model={folder}: Qwen2.5-Omni on hf needs torchvision")
    assert "\n" not in message and "qwen2_audio_7b" in message


@needs_espeak
@pytest.mark.audio
def test_probe_in_audio_mode_on_the_hf_speech_target(tmp_path: Path, qwen2_audio_dir: Path):
    """probe.py end to end: espeak stimuli heard by the tiny Qwen2-Audio through the
    qwen2_audio_7b preset; responses.parquet carries the spoken-reply columns."""
    import pandas as pd
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.probe import run
    from config_fixtures import CONF

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=[
            "probe=fairdialogue_decision", "probe.mode=audio", "probe.tasks=[award]",
            "~probe.attributes", "+probe.attributes={gender: [male, female]}", "limit=1",
            "target=qwen2_audio_7b",
            f"target.llm.model={qwen2_audio_dir}", "target.llm.device=cpu",
            "probe.sampling.max_tokens=4", f"paths.root_dir={tmp_path}",
            f"paths.output_dir={tmp_path / 'run'}", "progress=false", "logger=none",
            "llm_cache=null", "asr=none"])
    metrics = run(cfg)
    responses = pd.read_parquet(tmp_path / "run" / "responses.parquet")
    assert len(responses) == 2 and {"reply_audio", "transcript", "asr_model",
                                    "api_transcript", "reply_text"} <= set(responses.columns)
    assert responses["reply_audio"].isna().all() and responses["transcript"].isna().all()
    assert (responses["answer"] == responses["reply_text"]).all()
    assert sorted(p.name for p in (tmp_path / "run" / "audio" / "award").glob("*.wav")) == [
        "award-01__female.wav", "award-01__male.wav"]
    assert "asr/wer" not in metrics and "fairness/award/gender/n_items" in metrics


def test_the_cache_key_changes_with_what_shapes_the_reply(qwen2_audio_dir: Path):
    plain = speech_model(qwen2_audio_dir)
    prompted = speech_model(qwen2_audio_dir, system_prompt="Be brief.")
    appended = speech_model(qwen2_audio_dir, system_prompt="Be brief.", system_turn="append")
    penalised = speech_model(qwen2_audio_dir, repetition_penalty=1.1)
    assert len({plain.template_hash, prompted.template_hash, appended.template_hash,
                penalised.template_hash}) == 4
    assert speech_model(qwen2_audio_dir).template_hash == plain.template_hash


def test_a_cards_system_prompt_comes_first_and_the_studys_turn_after_it(
        qwen2_audio_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """``system_prompt`` with the study's own system turn: the card's prompt is the system
    turn, the study's instruction a user turn the model has acknowledged (the card's way)."""
    model = speech_model(qwen2_audio_dir, system_prompt="The card's prompt.")
    received: dict[str, Any] = {}
    real = model.lm.generate
    monkeypatch.setattr(model.lm, "generate", lambda **kw: received.update(kw) or real(**kw))
    model.chat([conversation(tone_wav(0.5, 16000))], Sampling(max_tokens=2))
    text = model.tokenizer.decode(received["input_ids"][0])
    turns = ["system\nThe card's prompt.<|im_end|>", "user\nAnswer with yes or no.<|im_end|>",
             "assistant\nSure, I got it.<|im_end|>", "user\nAudio 1: <|audio_bos|>"]
    at = [text.find(t) for t in turns]
    assert -1 not in at and at == sorted(at), text
    assert text.count("<|im_start|>system") == 1


def test_the_checkpoints_repetition_penalty_is_not_read(tmp_path: Path, qwen2_audio_dir: Path):
    """A generation config with a repetition penalty (Qwen2-Audio-7B-Instruct's has 1.1) changes
    no reply: decoding is greedy, as on vLLM, unless the block sets one."""
    penalised = tmp_path / "penalised"
    shutil.copytree(qwen2_audio_dir, penalised)
    config = json.loads((penalised / "generation_config.json").read_text())
    config.update(repetition_penalty=5.0, _from_model_config=False)   # read as written
    (penalised / "generation_config.json").write_text(json.dumps(config))
    conv, sampling = conversation(tone_wav(1.0, 16000)), Sampling(max_tokens=12)
    plain = speech_model(qwen2_audio_dir).chat([conv], sampling)[0].text
    assert speech_model(penalised).chat([conv], sampling)[0].text == plain
    asked = speech_model(qwen2_audio_dir, repetition_penalty=5.0).chat([conv], sampling)[0].text
    assert asked != plain           # the tiny model repeats itself; the penalty breaks it


@pytest.mark.slow   # about 20 s on 2 cores: the talker, DiT and BigVGAN run twice, then Whisper
def test_qwen25_omni_speaks_and_whisper_hears_the_reply(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    """audio_out: the talker's waveform comes back as a 24 kHz WAV, is saved under the run and
    transcribed by a tiny Whisper; the answer parsed is Whisper's transcript."""
    import transformers

    from benevaudit.asr.replies import add_spoken
    from benevaudit.outputs.spoken_replies import write_spoken_replies
    from benevaudit.probes.fairdialogue.stimuli import Stimuli
    from benevaudit.asr.spec import AsrSpec
    from speech_fixtures import whisper

    processor = omni_processor()
    folder = qwen25_omni(tmp_path / "omni", processor, talker=True)
    if not has_torchvision():
        load = transformers.AutoProcessor.from_pretrained
        monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained",
                            lambda path, **kw: processor if Path(path) == folder
                            else load(path, **kw))
    model = speech_model(folder, audio_out=True, max_speech_tokens=12)
    assert model.model.has_talker
    conv = conversation(tone_wav(0.8, 16000))
    [reply] = model.chat([conv], Sampling(max_tokens=3))
    wav = soundfile.info(io.BytesIO(base64.b64decode(reply.audio or "")))
    assert wav.samplerate == 24000 and wav.frames > 0 and reply.completion_tokens <= 3
    assert model.chat([conv], Sampling(max_tokens=3))[0].audio == reply.audio   # seeded talker
    asr = AsrSpec.of({"kind": "whisper", "name": "tiny-whisper", "model": str(
        whisper(tmp_path / "whisper")), "device": "cpu", "dtype": "float32", "batch_size": 1,
        "language": None, "chunk_length_s": 30.0})
    rows = [{"item": "award-01", "task": "award", "group": "female", "answer": reply.text}]
    said = add_spoken(rows, [reply], asr)
    write_spoken_replies(tmp_path / "run", Stimuli(replies=tuple(said)))
    saved = tmp_path / "run" / "audio_out" / "award" / "award-01__female.wav"
    assert rows[0]["reply_audio"] == "audio_out/award/award-01__female.wav" and saved.is_file()
    assert soundfile.info(str(saved)).frames == wav.frames
    assert rows[0]["asr_model"] == "tiny-whisper" and rows[0]["answer"] == rows[0]["transcript"]
    assert rows[0]["reply_text"] == reply.text
