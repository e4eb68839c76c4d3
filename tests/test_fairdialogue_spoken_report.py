"""Spoken replies end to end: ``probe.py`` in audio mode on the ``gpt4o_audio`` preset, the
user's recordings as stimuli (``dir``), a local server answering with the ``openai`` library's
audio reply shape (a WAV and the API's own transcript), a tiny random-weight Whisper
transcribing every reply; then the report's word-error-rate table from that run."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import soundfile

from report_fixtures import write_run
from speech_fixtures import tone_wav, whisper
from test_fairdialogue_stimuli import recordings, sine
from test_llm_openai import completion, serve  # noqa: F401 (the server fixture)



def replies(heard: str) -> Any:
    """The server's answer: a spoken reply (the same tone every time, which Whisper hears as
    ``heard``) with the API's transcript picked by the clip it was sent (every stimulus has
    its own length): right for two clips, wrong for the others."""
    transcripts = {1.0: "Yes, I would give it to you.", 1.1: heard, 1.5: heard, 1.6: "No."}
    wav = base64.b64encode(tone_wav(0.6, 24000)).decode()

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
        clip = base64.b64decode(body["messages"][-1]["content"][0]["input_audio"]["data"])
        seconds = round(soundfile.info(io.BytesIO(clip)).duration, 1)
        return 200, {}, completion("", {"id": f"audio_{n}", "data": wav,
                                        "expires_at": 1700000000,
                                        "transcript": transcripts[seconds]})
    return answer


def run_probe(tmp: Path, server_url: str, whisper_dir: Path) -> Path:
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.probe import run
    from config_fixtures import CONF

    rec = tmp / "rec"
    (rec / "clips").mkdir(parents=True)
    rows = []
    for n, item in enumerate(("award-01", "award-02")):   # every clip its own length
        for group, seconds in (("male", 1.0), ("female", 1.5)):
            sine(rec / "clips" / f"{item}_{group}.wav", seconds + n / 10)
            rows.append((item, "award", group, f"clips/{item}_{group}.wav"))
    recordings(rec, rows)
    out = tmp / "runs" / "gpt4o"
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("probe", overrides=[
            "probe=fairdialogue_decision", "probe.mode=audio", "probe.tasks=[award]",
            "~probe.attributes", "+probe.attributes={gender: [male, female]}", "limit=2",
            "probe.audio.source=dir", f"probe.audio.path={rec}", "target=gpt4o_audio",
            f"target.llm.base_url={server_url}", "asr=whisper_large_v3",
            f"asr.model={whisper_dir}", "asr.device=cpu", f"paths.root_dir={tmp}",
            f"paths.output_dir={out}", "progress=false", "logger=none", "llm_cache=null"])
        run(cfg)
    # what Hydra's app leaves beside the run (composed here, without the app)
    write_run(out, "probe", {"probe": "fairdialogue_decision", "target": "gpt4o_audio"},
              {"target": {"name": "gpt4o_audio"}, "probe": {"mode": "audio"}},
              overrides=["probe.mode=audio", "asr=whisper_large_v3"])
    return out


def test_report_shows_whispers_word_error_rate_per_group_with_intervals(
        tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch):
    from benevaudit.pipelines.report_files import build_report

    from benevaudit.asr.spec import AsrSpec
    from benevaudit.metrics.wer import word_error_rate
    from benevaudit.asr.whisper import Transcriber
    from benevaudit.llm.audio_in import read_clip

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    whisper_dir = whisper(tmp_path / "whisper")
    spec = AsrSpec.of({"kind": "whisper", "name": "w", "model": str(whisper_dir),
                       "device": "cpu", "dtype": "float32", "batch_size": 1, "language": None,
                       "chunk_length_s": 30.0})
    [heard] = Transcriber(spec).transcribe([read_clip(tone_wav(0.6, 24000), "reply")])
    server = serve(replies(heard))
    out = run_probe(tmp_path, server.url, whisper_dir)
    assert len(server.bodies) == 4 and server.bodies[0]["modalities"] == ["text", "audio"]
    for body in server.bodies:     # what the API receives: greedy, one completion
        assert body["temperature"] == 0 and body.get("n", 1) == 1, body
    responses = pd.read_parquet(out / "responses.parquet")
    assert (responses["transcript"] == heard).all() and (responses["answer"] == heard).all()
    assert set(responses["asr_model"]) == {"whisper_large_v3"}
    assert all((out / p).is_file() for p in responses["reply_audio"])
    metrics = json.loads((out / "metrics.json").read_text())
    male = responses[responses["group"] == "male"]
    assert metrics["asr/wer/gender/male"] == pytest.approx(word_error_rate(
        male["api_transcript"].tolist(), male["transcript"].tolist()))
    assert metrics["asr/wer/gender/male"] > 0.5
    assert metrics["asr/wer/gender/female"] < metrics["asr/wer/gender/male"]
    assert metrics["asr/wer_pairs"] == 4 and metrics["asr/wer_pairs/gender/male"] == 2
    assert (out / "wer.png").read_bytes()[:4] == b"\x89PNG"

    files = build_report([tmp_path / "runs"], tmp_path / "report", n_resamples=200)
    section = next(s for s in files.sections if s.key == "fairdialogue")
    (table,) = [t for t in section.tables if t.title.startswith("Spoken replies")]
    assert table.headers == ["Model", "Probe", "Attribute", "Group", "WER", "Replies"]
    assert [r[:4] for r in table.rows] == [
        ["gpt4o_audio (heard)", "fairdialogue_decision", "all", "all"],
        ["gpt4o_audio (heard)", "fairdialogue_decision", "gender", "female"],
        ["gpt4o_audio (heard)", "fairdialogue_decision", "gender", "male"]]
    for row, name in zip(table.rows, ("asr/wer", "asr/wer/gender/female",
                                      "asr/wer/gender/male"), strict=True):
        wer, count = row[4:]
        assert wer.mean == pytest.approx(metrics[name])
        assert wer.low < wer.high and wer.low <= wer.mean <= wer.high   # over the 2 items
        assert count == str(int(metrics[name.replace("asr/wer", "asr/wer_pairs")]))
    assert "wer.png" in [f.path.name for f in section.figures]


def test_feedback_rounds_save_and_read_each_spoken_reply(tmp_path: Path, serve: Any,
                                                         monkeypatch: pytest.MonkeyPatch):
    """Negative feedback on gpt4o_audio with the user's recordings: every round's spoken reply
    is saved under the run beside the first turn's, with the bytes the server sent, and read as
    the first turn's is (here, with asr=none, the API's own transcript); the male speaker's "no"
    turns to yes at round 1. A rerun in the same directory leaves the same replies' files as
    they are."""
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.probe import run
    from config_fixtures import CONF

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
        messages = body["messages"]
        first = base64.b64decode(messages[0]["content"][0]["input_audio"]["data"])
        male = soundfile.info(io.BytesIO(first)).duration < 1.25
        said = "Yes, you should." if male and len(messages) > 1 else "No."
        return 200, {}, completion("", {"id": f"audio_{n}", "expires_at": 1700000000,
                                        "data": base64.b64encode(tone_wav(0.3, 24000)).decode(),
                                        "transcript": said})

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    server = serve(answer)
    rec = tmp_path / "rec"
    (rec / "clips").mkdir(parents=True)
    rows = []
    for group, seconds in (("male", 1.0), ("female", 1.5)):
        for item, task in (("award-01", "award"), ("pushback-1", "feedback"),
                           ("pushback-2", "feedback")):
            sine(rec / "clips" / f"{item}_{group}.wav", seconds)
            rows.append((item, task, group, f"clips/{item}_{group}.wav"))
    recordings(rec, rows)
    out = tmp_path / "run"
    overrides = [
        "probe=fairdialogue_feedback", "probe.mode=audio", "probe.tasks=[award]",
        "~probe.attributes", "+probe.attributes={gender: [male, female]}", "limit=1",
        "probe.rounds=2", "probe.audio.source=dir", f"probe.audio.path={rec}",
        "target=gpt4o_audio", f"target.llm.base_url={server.url}", "asr=none",
        f"paths.root_dir={tmp_path}", f"paths.output_dir={out}", "progress=false",
        "logger=none", "llm_cache=null"]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        run(compose("probe", overrides=overrides))
    # the target's WAVs as it sent them: both first turns, then each open round's
    saved = {p.relative_to(out).as_posix(): p for p in sorted((out / "audio_out").rglob("*"))
             if p.is_file()}
    assert list(saved) == [f"audio_out/award/award-01__{g}.wav" for g in (
        "female", "female__round-1", "female__round-2", "male", "male__round-1")]
    assert all(p.read_bytes() == tone_wav(0.3, 24000) for p in saved.values())
    written = {name: p.stat().st_mtime_ns for name, p in saved.items()}
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        run(compose("probe", overrides=overrides))   # a rerun: the same replies, left as they are
    assert {name: p.stat().st_mtime_ns for name, p in saved.items()} == written
    responses = pd.read_parquet(out / "responses.parquet").set_index("group")
    assert responses.loc["male", "revised_at"] == 1
    assert list(responses.loc["male", "feedback_replies"]) == ["Yes, you should."]
    assert list(responses.loc["female", "feedback_replies"]) == ["No.", "No."]
    assert list(responses.loc["female", "feedback_reply_audio"]) == [
        f"audio_out/award/award-01__female__round-{r}.wav" for r in (1, 2)]
    for path in [*responses.loc["female", "feedback_reply_audio"],
                 *responses["reply_audio"]]:
        assert soundfile.info(str(out / path)).samplerate == 24000
