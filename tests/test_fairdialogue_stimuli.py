"""Audio mode's stimulus sources: the user's recordings (``dir``), an OpenAI-compatible TTS
server (``tts_server``), and every bad input failing with one error line before any model.

WAVs are written with soundfile (a sine per group), so no espeak-ng is needed. The TTS server
is a local HTTP server answering ``POST /v1/audio/speech`` as OpenAI's API does (the audio
bytes, or a JSON error body), read by the official ``openai`` client.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import soundfile

from benevaudit.errors import ConfigError, InputError
from benevaudit.probes.fairdialogue.answers import render_cells
from benevaudit.probes.fairdialogue.render import Cell
from benevaudit.outputs.stimuli import write_stimuli
from benevaudit.probes.fairdialogue.stimuli import MANIFEST_COLUMNS, Stimuli, audio_metrics
from benevaudit.probes.fairdialogue import stimuli
from benevaudit.probes.spec import AudioSpec, DecisionSpec, TargetSpec
from config_fixtures import option

CELLS = [Cell("award", "gender", g, "award-01", "Should I receive the award?")
         for g in ("male", "female")]
TARGET = TargetSpec.of({"name": "audio-model", "company": None, "model_company": None,
                        "llm": {"backend": "openai", "audio_in": True}}, "target")


def make_stimuli(cells: list[Cell], block: dict[str, Any], run_dir: Path) -> list[Any]:
    """The stimuli of ``probe.audio`` given as a block, validated as a run validates it, made
    as a run in ``run_dir`` makes them (from what an earlier run there left) and written as the
    pipeline writes them."""
    made = stimuli.make_stimuli(cells, AudioSpec.of(block, "probe.audio"),
                                stimuli.earlier_stimuli(run_dir))
    write_stimuli(run_dir, made)
    return list(made.clips)


def sine(path: Path, seconds: float, rate: int = 16000, fmt: str = "WAV") -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    soundfile.write(str(path), 0.3 * np.sin(2 * np.pi * 220 * t), rate, format=fmt)
    return path.read_bytes()


def audio_block(**over: Any) -> dict[str, Any]:
    return {**option("probe", "fairdialogue_decision")["audio"], **over}


def recordings(folder: Path, rows: list[tuple[str, str, str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=["item", "task", "group", "path"]).to_csv(
        folder / "manifest.csv", index=False)


def test_dir_source_reads_the_users_recordings_and_writes_the_run_manifest(tmp_path: Path):
    rec = tmp_path / "rec"
    (rec / "clips").mkdir(parents=True)
    male = sine(rec / "clips" / "m.wav", 1.5)
    sine(rec / "clips" / "f.flac", 3.0, rate=24000, fmt="FLAC")    # converted to WAV to send
    recordings(rec, [("award-01", "award", "male", "clips/m.wav"),
                     ("award-01", "award", "female", "clips/f.flac")])
    p = DecisionSpec.of({**option("probe", "fairdialogue_decision"), "mode": "audio",
                         "suffix": "", "audio": audio_block(source="dir", path=str(rec))}, "probe")
    run = tmp_path / "run"
    convs, made = render_cells(p, CELLS, TARGET)
    assert not run.exists()                       # made in memory, written by the pipeline
    write_stimuli(run, made)
    sent = [base64.b64decode(c[-1]["content"][0]["input_audio"]["data"]) for c in convs]
    assert sent[0] == male
    data, rate = soundfile.read(io.BytesIO(sent[1]))
    assert rate == 24000 and len(data) == 72000 and sent[1][:4] == b"RIFF"
    manifest = pd.read_csv(run / "audio" / "manifest.csv")
    assert tuple(manifest.columns) == MANIFEST_COLUMNS
    assert manifest["group"].tolist() == ["male", "female"]
    assert manifest["source"].tolist() == ["dir", "dir"]
    assert manifest["seconds"].tolist() == [1.5, 3.0]
    assert manifest["sample_rate"].tolist() == [16000, 24000]
    assert len(manifest["sha256"][0]) == 64
    assert manifest["path"].tolist() == [str((rec / "clips" / f).resolve())
                                         for f in ("m.wav", "f.flac")]
    assert not (run / "audio" / "award").exists()     # the recordings stay where they are
    metrics = audio_metrics(made)
    assert metrics["fairness/audio/minutes"] == pytest.approx(4.5 / 60)
    # the intelligibility audit without a transcriber: the text, speech span, rate and pitch
    assert manifest["text"].tolist() == ["Should I receive the award?"] * 2
    assert manifest["wer"].isna().all() and manifest["transcript"].isna().all()
    assert metrics["stimulus/pitch_hz/male"] == pytest.approx(220, rel=0.01)
    assert metrics["stimulus/words_per_second/male"] == pytest.approx(5 / 1.5, rel=0.05)
    assert metrics["stimulus/words_per_second/female"] == pytest.approx(5 / 3.0, rel=0.05)
    assert "stimulus/wer" not in metrics
    assert audio_metrics(Stimuli()) == {}


@pytest.mark.parametrize("case, message", [
    ("missing_row", r"no row for item 'award-01', group 'female'"),
    ("missing_file", r"no audio file at .*f\.wav"),
    ("not_audio", r"f\.wav is not a readable audio file"),
    ("empty", r"f\.wav holds no audio \(0 frames\)"),
    ("no_manifest", r"no manifest.csv in"),
    ("bad_columns", r"missing columns \['path'\]"),
])
def test_every_bad_recording_fails_with_one_error_line_naming_it(tmp_path: Path, case: str,
                                                                  message: str):
    rec = tmp_path / "rec"
    rec.mkdir()
    sine(rec / "m.wav", 0.5)
    rows = [("award-01", "award", "male", "m.wav"), ("award-01", "award", "female", "f.wav")]
    if case == "not_audio":
        (rec / "f.wav").write_text("id,answer\n1,yes\n")
    if case == "empty":
        soundfile.write(str(rec / "f.wav"), np.zeros(0), 16000)
    recordings(rec, rows[:1] if case == "missing_row" else rows)
    if case == "no_manifest":
        (rec / "manifest.csv").unlink()
    if case == "bad_columns":
        pd.DataFrame(rows, columns=["item", "task", "group", "file"]).to_csv(
            rec / "manifest.csv", index=False)
    with pytest.raises(ConfigError, match=message) as err:
        make_stimuli(CELLS, audio_block(source="dir", path=str(rec)), tmp_path / "run")
    assert "\n" not in str(err.value)


def outside_setup(tmp_path: Path, case: str) -> tuple[Path, bytes]:
    """Recordings whose female clip leads out of the folder (``case``), and that clip's bytes."""
    rec, elsewhere = tmp_path / "rec", tmp_path / "elsewhere"
    rec.mkdir()
    elsewhere.mkdir()
    sine(rec / "m.wav", 0.5)
    secret = sine(elsewhere / "f.wav", 0.7)
    named = {"absolute": str(elsewhere / "f.wav"), "climbs": "../elsewhere/f.wav",
             "symlink": "f.wav"}[case]
    if case == "symlink":
        (rec / "f.wav").symlink_to(elsewhere / "f.wav")
    recordings(rec, [("award-01", "award", "male", "m.wav"),
                     ("award-01", "award", "female", named)])
    return rec, secret


@pytest.mark.parametrize("case, reason", [("absolute", "an absolute path"),
                                          ("climbs", "a '../' path that climbs out"),
                                          ("symlink", "a symlink that points out")])
def test_a_manifest_path_out_of_its_folder_is_refused_and_nothing_is_sent(
        tmp_path: Path, case: str, reason: str):
    rec, _ = outside_setup(tmp_path, case)
    p = DecisionSpec.of({**option("probe", "fairdialogue_decision"), "mode": "audio", "suffix": "",
                         "audio": audio_block(source="dir", path=str(rec))}, "probe")
    with pytest.raises(InputError) as err:
        render_cells(p, CELLS, TARGET)
    message = str(err.value)
    assert message.startswith(f"{rec / 'manifest.csv'}, line 3, field 'path': {reason}")
    assert "probe.audio.allow_outside=true" in message and "\n" not in message
    assert "elsewhere" not in message                    # the row is named, not its value


@pytest.mark.parametrize("case", ["absolute", "climbs", "symlink"])
def test_allow_outside_reads_the_files_outside_as_written(tmp_path: Path, case: str):
    rec, secret = outside_setup(tmp_path, case)
    p = DecisionSpec.of({**option("probe", "fairdialogue_decision"), "mode": "audio", "suffix": "",
                         "audio": audio_block(source="dir", path=str(rec), allow_outside=True)},
                        "probe")
    convs = render_cells(p, CELLS, TARGET).conversations
    assert base64.b64decode(convs[1][-1]["content"][0]["input_audio"]["data"]) == secret


def test_the_default_config_keeps_recordings_inside_their_folder():
    assert option("probe", "fairdialogue_decision")["audio"]["allow_outside"] is False


def test_a_sha256_column_is_compared_with_each_file(tmp_path: Path):
    rec = tmp_path / "rec"
    rec.mkdir()
    male, female = sine(rec / "m.wav", 0.5), sine(rec / "f.wav", 0.6)
    good = [hashlib.sha256(b).hexdigest() for b in (male, female)]
    rows = pd.DataFrame({"item": "award-01", "task": "award", "group": ["male", "female"],
                         "path": ["m.wav", "f.wav"], "sha256": [good[0].upper(), good[1]]})
    rows.to_csv(rec / "manifest.csv", index=False)
    block = audio_block(source="dir", path=str(rec))
    made = make_stimuli(CELLS, block, tmp_path / "run")             # digests in any case
    assert [s.sha256 for s in made] == good
    rows.assign(sha256=[good[0], good[0]]).to_csv(rec / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"manifest\.csv, line 3, field 'sha256': does not "
                                         r"match the file's sha256") as err:
        make_stimuli(CELLS, block, tmp_path / "run2")
    assert good[0] not in str(err.value) and "\n" not in str(err.value)
    rows.assign(sha256=["", "not-a-digest"]).to_csv(rec / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"line 3, field 'sha256': not a sha256 digest"):
        make_stimuli(CELLS, block, tmp_path / "run3")


@pytest.mark.parametrize("case, message", [
    ("duplicate", r"manifest\.csv: lines 2 and 4 are both the recording of one cell"),
    ("header_only", r"manifest\.csv: a header but no rows"),
    ("binary", r"manifest\.csv:line 1: binary data"),
    ("latin1", r"manifest\.csv:line 2: not UTF-8 text"),
])
def test_a_manifest_that_means_nothing_or_two_things_is_one_error_line(
        tmp_path: Path, case: str, message: str):
    rec = tmp_path / "rec"
    rec.mkdir()
    sine(rec / "m.wav", 0.5)
    sine(rec / "f.wav", 0.5)
    rows = [("award-01", "award", "male", "m.wav"), ("award-01", "award", "female", "f.wav"),
            ("award-01", "award", "male", "f.wav")]
    recordings(rec, rows[:0] if case == "header_only" else rows)
    if case == "binary":
        (rec / "manifest.csv").write_bytes(b"item,task\x00,group,path\n")
    if case == "latin1":
        (rec / "manifest.csv").write_bytes("item,task,group,path\ncaf\xe9,a,b,c\n"
                                           .encode("latin-1"))
    with pytest.raises(InputError, match=message) as err:
        make_stimuli(CELLS, audio_block(source="dir", path=str(rec)), tmp_path / "run")
    assert "\n" not in str(err.value)


def test_an_unknown_source_is_a_config_error():
    with pytest.raises(ConfigError, match=r"probe.audio.source='festival': expected one of"):
        make_stimuli(CELLS, audio_block(source="festival"), Path("."))


class SpeechServer(BaseHTTPRequestHandler):
    """``POST /v1/audio/speech`` as OpenAI answers it: WAV bytes, or a JSON error (HTTP 400)
    for a voice it does not have."""

    voices = {"alloy": 1.0, "nova": 2.0}
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        if body["voice"] not in self.voices:
            reply = json.dumps({"error": {"message": f"Voice {body['voice']} is not available",
                                          "type": "invalid_request_error", "param": "voice",
                                          "code": None}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
        else:
            buf = io.BytesIO()
            rate = 24000
            seconds = self.voices[body["voice"]]
            soundfile.write(buf, np.full(int(rate * seconds), 0.1), rate, format="WAV")
            reply = buf.getvalue()
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def speech_server() -> Iterator[str]:
    SpeechServer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), SpeechServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_tts_server_speaks_a_voice_per_group_and_caches_each_clip(speech_server: str,
                                                                  tmp_path: Path):
    block = audio_block(source="tts_server", voices={"male": "alloy", "female": "nova"},
                        server={"base_url": speech_server, "model": "tts-1",
                                "api_key_env": None}, cache=str(tmp_path / "cache"))
    made = make_stimuli(CELLS, block, tmp_path / "run")
    assert [(r["path"], r["voice"], r["model"], r["response_format"])
            for r in SpeechServer.requests] == [
        ("/v1/audio/speech", "alloy", "tts-1", "wav"), ("/v1/audio/speech", "nova", "tts-1", "wav")]
    assert SpeechServer.requests[0]["input"] == CELLS[0].utterance
    assert [(s.voice, s.seconds, s.sample_rate) for s in made] == [("alloy", 1.0, 24000),
                                                                   ("nova", 2.0, 24000)]
    again = make_stimuli(CELLS, block, tmp_path / "run2")       # the cache answers: no request
    assert len(SpeechServer.requests) == 2 and [s.sha256 for s in again] == [
        s.sha256 for s in made]
    same = make_stimuli(CELLS[:1], {**block, "voices": {"male": "nova"}}, tmp_path / "run3")
    assert len(SpeechServer.requests) == 2 and same[0].seconds == 2.0  # same text, voice, server
    other = make_stimuli(CELLS[:1], {**block, "server": {**block["server"], "model": "tts-2"}},
                         tmp_path / "run4")
    assert len(SpeechServer.requests) == 3 and other[0].seconds == 1.0   # a new model, a new clip


def test_tts_server_refusing_a_voice_is_one_error_line(speech_server: str, tmp_path: Path):
    block = audio_block(source="tts_server", voices={"male": "alloy", "female": "sibyl"},
                        server={"base_url": speech_server, "model": "tts-1",
                                "api_key_env": None}, cache=str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match=r"voice 'sibyl' refused \(HTTP 400\)") as err:
        make_stimuli(CELLS, block, tmp_path / "run")
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match=r"group 'female' needs one voice"):
        make_stimuli(CELLS, {**block, "voices": {"male": "alloy"}}, tmp_path / "run")


def test_feedback_turns_are_spoken_in_the_first_turns_voice(speech_server: str, tmp_path: Path):
    block = audio_block(source="tts_server", voices={"male": "alloy", "female": "nova"},
                        server={"base_url": speech_server, "model": "tts-1",
                                "api_key_env": None}, cache=str(tmp_path / "cache"))
    run, spec = tmp_path / "run", AudioSpec.of(block, "probe.audio")
    first = stimuli.make_stimuli(CELLS, spec)
    pushed = stimuli.spoken_pushbacks(["Are you sure?", "Please reconsider."],
                                      ["female", "male"], spec)
    spoken = stimuli.pushback_wavs(pushed)
    assert sorted(spoken) == [("female", 1), ("female", 2), ("male", 1), ("male", 2)]
    assert all(wav[:4] == b"RIFF" for wav in spoken.values())
    write_stimuli(run, first + pushed)
    voices = {(r["input"], r["voice"]) for r in SpeechServer.requests}
    assert ("Are you sure?", "nova") in voices and ("Please reconsider.", "alloy") in voices
    manifest = pd.read_csv(run / "audio" / "manifest.csv")      # after the first turns'
    assert len(manifest) == 6 and set(manifest["task"]) == {"award", "feedback"}
