"""Spoken replies: saved under the run, transcribed by a tiny random-weight Whisper of the real
classes, read as the answer; WER of Whisper's transcripts against the API's."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import soundfile

from benevaudit.asr.replies import COLUMNS, add_spoken
from benevaudit.asr.spec import AsrSpec
from benevaudit.metrics.wer import pair_counts, wer_metrics, word_error_rate
from benevaudit.asr.whisper import Transcriber
from benevaudit.errors import ConfigError
from benevaudit.llm.audio_in import Clip, read_clip
from benevaudit.llm.base import Completion
from benevaudit.outputs.spoken_replies import write_spoken_replies
from benevaudit.probes.fairdialogue.stimuli import Stimuli
from config_fixtures import option
from speech_fixtures import tone_wav, whisper


@pytest.fixture(scope="module")
def whisper_spec(tmp_path_factory: pytest.TempPathFactory) -> AsrSpec:
    folder = whisper(tmp_path_factory.mktemp("whisper"))
    return AsrSpec.of({**option_asr("whisper_large_v3"), "model": str(folder), "device": "cpu",
                       "batch_size": 2, "language": "english"}, "asr")


def option_asr(name: str) -> dict:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from config_fixtures import CONF

    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=[f"asr={name}"])
    return OmegaConf.to_container(cfg.asr)


def test_asr_options_validate_and_whisper_needs_a_model():
    assert AsrSpec.of(option_asr("none"), "asr").kind == "none"
    spec = AsrSpec.of(option_asr("whisper_large_v3"), "asr")
    assert spec.model == "openai/whisper-large-v3" and spec.name == "whisper_large_v3"
    with pytest.raises(ConfigError, match="asr=whisper needs a hub id"):
        AsrSpec.of({**option_asr("whisper_large_v3"), "model": None}, "asr")
    with pytest.raises(ConfigError, match="asr.model=/nonexistent/w: no Whisper checkpoint"):
        AsrSpec.of({**option_asr("whisper_large_v3"), "model": "/nonexistent/w"}, "asr")
    assert option("probe", "fairdialogue_decision")["mode"] == "text"


def test_whisper_transcribes_replies_at_any_rate_and_chunks_long_ones(whisper_spec: AsrSpec):
    transcriber = Transcriber(whisper_spec)
    assert transcriber.rate == 16000
    assert transcriber.generate_kwargs() == {"num_beams": 1, "do_sample": False,
                                             "task": "transcribe", "language": "english"}
    clips = [read_clip(tone_wav(s, 24000), "reply") for s in (1.0, 2.5, 41.0)]
    texts = transcriber.transcribe(clips)
    assert len(texts) == 3 and all(isinstance(t, str) for t in texts)
    # the same clip at 24 kHz and at 16 kHz is heard the same after resampling
    assert transcriber.transcribe([read_clip(tone_wav(1.0, 16000), "r")]) == texts[:1]


def reply(text: str, seconds: float | None = None, transcript: str | None = None) -> Completion:
    audio = base64.b64encode(tone_wav(seconds, 24000)).decode() if seconds else None
    return Completion(text, "stop", 10, 3, audio=audio, transcript=transcript)


def rows() -> list[dict]:
    return [{"item": f"award-0{i}", "task": "award", "group": g, "answer": "?"}
            for i, g in ((1, "male"), (1, "female"), (2, "male"))]


def test_spoken_replies_are_saved_transcribed_and_read_as_the_answer(tmp_path: Path,
                                                                      whisper_spec: AsrSpec):
    table = rows()
    heard: list[Clip] = []

    def transcribe(clips: list[Clip]) -> list[str]:   # Whisper itself, recording its input
        heard.extend(clips)
        return Transcriber(whisper_spec).transcribe(clips)

    sent = [reply("", 1.5, "Yes."), reply("No.", 0.5), reply("Yes, of course.")]
    said = add_spoken(table, sent, whisper_spec, transcribe)
    assert all(set(COLUMNS) <= set(r) for r in table)
    first, second, text_only = table
    assert first["reply_audio"] == "audio_out/award/award-01__male.wav"
    assert second["reply_audio"] == "audio_out/award/award-01__female.wav"
    assert [s.path for s in said] == [first["reply_audio"], second["reply_audio"]]
    write_spoken_replies(tmp_path, Stimuli(replies=tuple(said)))
    assert (tmp_path / first["reply_audio"]).read_bytes() == base64.b64decode(sent[0].audio)
    assert sorted(p.name for p in tmp_path.rglob("*.wav")) == ["award-01__female.wav",
                                                                "award-01__male.wav"]
    saved = soundfile.info(str(tmp_path / first["reply_audio"]))
    assert saved.samplerate == 24000 and abs(saved.duration - 1.5) < 1e-3
    assert [round(c.seconds, 3) for c in heard] == [1.5, 0.5]
    assert first["api_transcript"] == "Yes." and second["api_transcript"] is None
    for row in (first, second):
        assert row["asr_model"] == "whisper_large_v3" and row["answer"] == row["transcript"]
    assert text_only["reply_audio"] is None and text_only["transcript"] is None
    assert text_only["answer"] == "Yes, of course." and text_only["asr_model"] is None


def test_without_asr_the_api_transcript_is_the_answer(tmp_path: Path):
    table = rows()[:2]
    add_spoken(table, [reply("", 0.3, "No, sorry."), reply("Yes", 0.3)],
               AsrSpec.of(option_asr("none")))
    assert [r["answer"] for r in table] == ["No, sorry.", "Yes"]
    assert all(r["transcript"] is None and r["reply_audio"] for r in table)


def test_word_error_rate_against_the_api_transcripts():
    assert word_error_rate(["a b c", "d e"], ["a x c", "d e f"]) == pytest.approx(2 / 5)
    assert word_error_rate(["Yes, I would."], ["yes i would"]) == 0.0
    table = [{"api_transcript": "Yes, I would hire her.", "transcript": "yes i would hire"},
             {"api_transcript": None, "transcript": "no"},
             {"api_transcript": "", "transcript": "x"},
             {"api_transcript": "No.", "transcript": None}]
    assert wer_metrics(table) == {"asr/wer": pytest.approx(1 / 5), "asr/wer_pairs": 1.0}
    assert wer_metrics([{"answer": "yes"}]) == {}


def test_word_error_rate_adds_up_per_reply_and_per_group():
    """Per-reply counts sum to jiwer's corpus WER (what the report resamples), and rows that
    name the speaker's group get a WER per group."""
    import jiwer

    refs = ["Yes, I would hire her.", "no", "I can't say", "a b c d"]
    hyps = ["yes i would hire", "no thanks", "i cannot say", "a x d"]
    counts = pair_counts(refs, hyps)
    assert counts.tolist() == [[1, 5], [1, 1], [1, 3], [2, 4]]
    assert counts[:, 0].sum() / counts[:, 1].sum() == pytest.approx(jiwer.wer(
        [r.lower().replace(",", "").replace(".", "").replace("'", "") for r in refs],
        [h.replace("'", "") for h in hyps]))
    table = [{"attribute": "gender", "group": g, "api_transcript": r, "transcript": h}
             for g, r, h in zip(("male", "female", "male", "female"), refs, hyps)]
    metrics = wer_metrics(table)
    assert metrics["asr/wer"] == pytest.approx(word_error_rate(refs, hyps)) == 5 / 13
    assert metrics["asr/wer/gender/male"] == pytest.approx(word_error_rate(refs[::2], hyps[::2]))
    assert metrics["asr/wer/gender/female"] == pytest.approx(3 / 5)
    assert metrics["asr/wer_pairs/gender/male"] == 2.0 and metrics["asr/wer_pairs"] == 4.0


def test_heard_texts_read_each_reply_as_a_later_turn_would(whisper_spec: AsrSpec):
    from benevaudit.asr.replies import heard_texts

    replies = [reply("", 0.4, "No."), reply("Yes."), reply("", 0.4)]
    assert heard_texts(replies, None) == ["No.", "Yes.", ""]
    whispered = heard_texts(replies, whisper_spec)
    assert whispered[1] == "Yes." and whispered[0] == whispered[2]   # the same tone, heard
    assert whispered[0] == Transcriber(whisper_spec).transcribe(
        [read_clip(tone_wav(0.4, 24000), "r")])[0]


def test_a_later_turns_spoken_replies_are_saved_and_heard_by_whisper(tmp_path: Path,
                                                                    whisper_spec: AsrSpec):
    from benevaudit.asr.replies import Listener

    listen = Listener(whisper_spec)
    keys = [("award", "gender", "award-01", "male"), ("award", "gender", "award-02", "female")]
    heard = listen(keys, 2, [reply("", 0.4, "No."), reply("Yes.")])
    whisper_text = Transcriber(whisper_spec).transcribe([read_clip(tone_wav(0.4, 24000), "r")])
    assert heard == [(whisper_text[0], "audio_out/award/award-01__male__round-2.wav"),
                     ("Yes.", None)]
    assert not list(tmp_path.iterdir())           # nothing written until the run's outputs
    write_spoken_replies(tmp_path, Stimuli(replies=tuple(listen.spoken)))
    saved = soundfile.info(str(tmp_path / "audio_out/award/award-01__male__round-2.wav"))
    assert saved.samplerate == 24000 and abs(saved.duration - 0.4) < 1e-3
    assert not (tmp_path / "audio_out/award/award-02__female__round-2.wav").exists()
