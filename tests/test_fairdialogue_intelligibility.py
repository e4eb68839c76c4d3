"""The intelligibility audit of FairDialogue's spoken stimuli: pitch and speaking rate from the
waveform (synthetic tones of known frequency), each stimulus's word error rate against its text,
GUS and SNSR within strata of stimulus WER, end to end through ``probe.py`` and the report."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from benevaudit.llm.audio_in import Clip, read_clip
from benevaudit.probes.fairdialogue import intelligibility as intel
from benevaudit.probes.fairdialogue import scoring
from benevaudit.probes.fairdialogue.acoustics import measure, words_per_second
from benevaudit.probes.fairdialogue.decision_tasks import DECISION_TASKS
from report_fixtures import write_run
from test_fairdialogue_stimuli import recordings, sine
from test_llm_openai import completion, serve  # noqa: F401 (the server fixture)

RATE = 22050          # espeak-ng's rate: the measures resample to 16 kHz first


def tone(hz: float, seconds: float = 1.0, pad: float = 0.25, harmonics: int = 1) -> Clip:
    """``seconds`` of a tone at ``hz`` (with ``harmonics`` falling as 1/k, a voice-like
    spectrum) between ``pad`` seconds of silence on each side."""
    t = np.arange(int(seconds * RATE)) / RATE
    wave = sum(np.sin(2 * np.pi * hz * k * t) / k for k in range(1, harmonics + 1))
    silence = np.zeros(int(pad * RATE))
    return Clip(np.concatenate([silence, 0.3 * wave, silence]).astype(np.float32), RATE)


@pytest.mark.parametrize("hz,harmonics", [(70, 1), (110, 5), (220, 1), (220, 8), (350, 3)])
def test_mean_pitch_of_a_tone_is_its_frequency_and_silence_is_left_out(hz, harmonics):
    sound = measure(tone(hz, harmonics=harmonics))
    assert sound.pitch_hz == pytest.approx(hz, rel=0.005)     # not an octave below or above
    assert sound.speech_seconds == pytest.approx(1.0, abs=0.02)
    assert sound.voiced_frames >= 95


def test_silence_and_noise_have_no_pitch_and_rate_counts_words():
    assert np.isnan(measure(Clip(np.zeros(RATE, np.float32), RATE)).pitch_hz)
    noise = np.random.default_rng(0).standard_normal(RATE).astype(np.float32) * 0.3
    assert np.isnan(measure(Clip(noise, RATE)).pitch_hz)
    assert measure(Clip(np.zeros(RATE, np.float32), RATE)).speech_seconds == 0.0
    assert words_per_second("Should I get the award?", 2.0) == 2.5
    assert np.isnan(words_per_second("Hello there", 0.0))


def plain(text: str) -> str:
    return re.sub(r"[^\w\s]", "", text.lower())


def test_stimulus_wer_is_against_its_own_text_after_normalising_both():
    assert intel.error_rate("Should I get the prize?", "should I get a prize", plain) == 0.2
    assert intel.error_rate("Yes.", "", plain) == 1.0
    assert np.isnan(intel.error_rate("?!", "anything", plain))


def test_strata_are_named_by_their_bounds_and_an_item_takes_its_worst_group():
    assert intel.labels([0.1, 0.3]) == ["le0.1", "0.1-0.3", "gt0.3"]
    assert [intel.stratum(w, [0.1, 0.3]) for w in (0.0, 0.1, 0.2, 0.3, 0.31, 2.0)] == [
        "le0.1", "le0.1", "0.1-0.3", "0.1-0.3", "gt0.3", "gt0.3"]
    rows = [{"task": "award", "attribute": "gender", "item": i, "group": g, "stimulus_wer": w}
            for i, g, w in (("a", "male", 0.0), ("a", "female", 0.25), ("a", "neutral", 0.9),
                            ("b", "male", 0.05), ("b", "female", None))]
    assert intel.item_strata(rows, [0.1, 0.3]) == {("award", "gender", "a"): "0.1-0.3"}


def decision_rows(cases: Sequence[tuple[str, str, str, float]]) -> list[dict[str, Any]]:
    rows = [{"task": "award", "attribute": "gender", "item": i, "group": g, "answer": a,
             "stimulus_wer": w} for i, g, a, w in cases]
    return scoring.parse_rows(rows, "decision", None)


def test_gus_within_strata_separates_well_heard_items_from_misheard_ones():
    rows = decision_rows([("award-01", "male", "Yes.", 0.0), ("award-01", "female", "Yes.", 0.05),
                          ("award-02", "male", "Yes.", 0.0), ("award-02", "female", "No.", 0.6)])
    groups = {"gender": ["male", "female"]}
    metrics = intel.stratified(rows, [0.1, 0.3], lambda p: scoring.decision_metrics(p, groups))
    base = "fairness/award/gender/by_wer"
    assert metrics[f"{base}/le0.1/gus"] == 0.0 and metrics[f"{base}/le0.1/n_items"] == 1
    assert metrics[f"{base}/gt0.3/gus"] == 1.0 and metrics[f"{base}/gt0.3/n_items"] == 1
    assert metrics[f"{base}/0.1-0.3/n_items"] == 0 and f"{base}/0.1-0.3/gus" not in metrics
    assert scoring.decision_metrics(rows, groups)["fairness/award/gender/gus"] == 0.5
    # text mode, or no transcriber: no stimulus WER, no strata
    text = [{k: v for k, v in r.items() if k != "stimulus_wer"} for r in rows]
    assert intel.stratified(text, [0.1], lambda p: scoring.decision_metrics(p, groups)) == {}


class FakeHearing:
    """Whisper's stand-in: hears award-02's female stimulus as nothing, every other stimulus
    word for word (clips told apart by their length)."""

    name = "fake_whisper"

    def __init__(self, texts: dict[float, str]) -> None:
        self.texts, self.heard = texts, 0

    def transcribe(self, clips: Sequence[Clip]) -> list[str]:
        self.heard += len(clips)
        return [self.texts.get(round(c.seconds, 1), "") for c in clips]

    def normalise(self, text: str) -> str:
        return plain(text)


def spoken_run(tmp: Path, server_url: str, hears: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``probe.py`` in audio mode on Gemini's preset (a local server), two award items under
    gender from the user's recordings, every stimulus heard by ``hears``."""
    from hydra import compose, initialize_config_dir

    from benevaudit.pipelines.probe import run
    from benevaudit.probes.fairdialogue import answers
    from config_fixtures import CONF

    monkeypatch.setattr(answers, "hearing_of", lambda asr: hears)
    rec = tmp / "rec"
    (rec / "clips").mkdir(parents=True)
    rows = []
    for n, item in enumerate(("award-01", "award-02")):    # every clip its own length
        for group, seconds in (("male", 1.0), ("female", 1.5)):
            sine(rec / "clips" / f"{item}_{group}.wav", seconds + n / 10)
            rows.append((item, "award", group, f"clips/{item}_{group}.wav"))
    recordings(rec, rows)
    out = tmp / "runs" / "gemini"
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        run(compose("probe", overrides=[
            "probe=fairdialogue_decision", "probe.mode=audio", "probe.tasks=[award]",
            "~probe.attributes", "+probe.attributes={gender: [male, female]}", "limit=2",
            "probe.audio.source=dir", f"probe.audio.path={rec}", "target=gemini_25_flash_lite",
            f"target.llm.base_url={server_url}", "asr=whisper_large_v3", "asr.device=cpu",
            f"paths.root_dir={tmp}", f"paths.output_dir={out}", "progress=false",
            "logger=none", "llm_cache=null"]))
    write_run(out, "probe", {"probe": "fairdialogue_decision", "target": "gemini_25_flash_lite"},
              {"target": {"name": "gemini_25_flash_lite"},
               "probe": {"mode": "audio", "kind": "decision", "audio": {"wer_strata": [0.1, 0.3]}}})
    return out


def test_a_spoken_run_audits_its_stimuli_and_the_report_shows_both_tables(
        tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch):
    from benevaudit.pipelines.report_files import build_report

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], Any]:
        clip = base64_clip(body)                   # award-02's female speaker is refused
        return 200, {}, completion("No." if round(clip.seconds, 1) == 1.6 else "Yes.")

    monkeypatch.setenv("GEMINI_API_KEY", "test")
    text = {1.0: DECISION_TASKS["award"]["award-01"], 1.5: DECISION_TASKS["award"]["award-01"],
            1.1: DECISION_TASKS["award"]["award-02"]}
    hears = FakeHearing(text)
    out = spoken_run(tmp_path, serve(answer).url, hears, monkeypatch)
    assert hears.heard == 4                          # each stimulus transcribed once
    manifest = pd.read_csv(out / "audio" / "manifest.csv")
    assert set(manifest["asr_model"]) == {"fake_whisper"}
    assert manifest.set_index(["item", "group"])["wer"].to_dict() == {
        ("award-01", "male"): 0.0, ("award-01", "female"): 0.0,
        ("award-02", "male"): 0.0, ("award-02", "female"): 1.0}
    assert manifest["pitch_hz"].to_numpy() == pytest.approx(220, rel=0.01)
    assert (manifest["text"] == manifest["item"].map(DECISION_TASKS["award"])).all()
    responses = pd.read_parquet(out / "responses.parquet")
    assert responses.set_index(["item", "group"])["stimulus_wer"].to_dict() == \
        manifest.set_index(["item", "group"])["wer"].to_dict()
    metrics = json.loads((out / "metrics.json").read_text())
    base = "fairness/award/gender"
    assert metrics[f"{base}/gus"] == 0.5
    assert metrics[f"{base}/by_wer/le0.1/gus"] == 0.0       # heard well: the same answer
    assert metrics[f"{base}/by_wer/gt0.3/gus"] == 1.0       # misheard: the gap lives here
    assert metrics["stimulus/wer/female"] == 0.5 and metrics["stimulus/wer/male"] == 0.0
    assert metrics["stimulus/wer"] == 0.25

    files = build_report([tmp_path / "runs"], tmp_path / "report", n_resamples=50)
    section = next(s for s in files.sections if s.key == "fairdialogue")
    (strata,) = [t for t in section.tables if t.title.startswith("By stimulus WER")]
    assert strata.headers == ["Model", "Task", "Attribute", "Measure", "All items",
                              "WER le0.1", "n le0.1", "WER 0.1-0.3", "n 0.1-0.3",
                              "WER gt0.3", "n gt0.3"]
    (row,) = strata.rows
    assert row[:4] == ["gemini_25_flash_lite (heard)", "award", "gender", "GUS"]
    assert [row[4].mean, row[5].mean, row[6].mean, row[8].mean, row[9].mean, row[10].mean] == [
        0.5, 0.0, 1.0, 0.0, 1.0, 1.0]
    (stimuli,) = [t for t in section.tables if t.title.startswith("Spoken stimuli")]
    by_group = {r[0]: r[1:] for r in stimuli.rows}
    assert by_group["female"][0].mean == 0.5 and by_group["male"][2].mean == pytest.approx(220,
                                                                                          rel=0.01)


def base64_clip(body: dict[str, Any]) -> Clip:
    import base64

    data = body["messages"][-1]["content"][0]["input_audio"]["data"]
    return read_clip(base64.b64decode(data), "request")


def test_whisper_hears_a_stimulus_through_the_runs_shared_transcriber(tmp_path: Path):
    """The real classes (a tiny random-weight Whisper): one model for every clip of the run,
    Whisper's English normaliser on both sides of the WER; the figures are meaningless, the
    path is real."""
    from benevaudit.asr.replies import Hearing, hearing_of
    from benevaudit.asr.spec import AsrSpec
    from speech_fixtures import whisper

    spec = AsrSpec.of({"kind": "whisper", "name": "whisper_large_v3",
                       "model": str(whisper(tmp_path / "w")), "device": "cpu",
                       "dtype": "float32", "batch_size": 2, "language": None,
                       "chunk_length_s": 30.0})
    hears = hearing_of(spec)
    assert isinstance(hears, Hearing) and hearing_of(None) is None
    assert hears.normalise("Twelve students, forty minutes!") == "12 students 40 minutes"
    wavs = [tmp_path / f"{s}.wav" for s in (1, 2)]
    for path, seconds in zip(wavs, (1.0, 2.0), strict=True):
        sine(path, seconds)
    figures = intel.audit(["Should I get it?", "Yes."], [w.read_bytes() for w in wavs], hears)
    assert [f.asr_model for f in figures] == ["whisper_large_v3"] * 2
    assert all(isinstance(f.transcript, str) and f.wer is not None and f.wer >= 0
               for f in figures)
    assert hears.model() is hears.model()             # loaded once


def test_a_rerun_reuses_the_manifests_figures_and_a_new_transcriber_hears_again(tmp_path):
    from benevaudit.outputs.stimuli import write_stimuli
    from benevaudit.probes.fairdialogue import stimuli
    from benevaudit.probes.fairdialogue.render import Cell
    from benevaudit.probes.spec import AudioSpec
    from test_fairdialogue_stimuli import audio_block

    rec = tmp_path / "rec"
    (rec / "clips").mkdir(parents=True)
    sine(rec / "clips" / "m.wav", 1.0)
    sine(rec / "clips" / "f.wav", 1.5)
    recordings(rec, [("award-01", "award", "male", "clips/m.wav"),
                     ("award-01", "award", "female", "clips/f.wav")])
    cells = [Cell("award", "gender", g, "award-01", "Should I receive the award?")
             for g in ("male", "female")]
    spec = AudioSpec.of(audio_block(source="dir", path=str(rec)), "probe.audio")
    hears = FakeHearing({1.0: "Should I receive the award?", 1.5: "Should I deceive the award"})
    def run(hears: Any) -> list[Any]:     # a run in tmp_path/run: made, then written
        made = stimuli.make_stimuli(cells, spec, stimuli.earlier_stimuli(tmp_path / "run"),
                                    hears)
        write_stimuli(tmp_path / "run", made)
        return list(made.clips)

    first = run(hears)
    assert [s.wer for s in first] == [0.0, 0.2] and hears.heard == 2
    again = run(hears)
    assert again == first and hears.heard == 2        # nothing measured or heard again
    assert stimuli.make_stimuli(cells, spec, hears=hears).clips == tuple(first)
    assert hears.heard == 4                           # without the earlier run: heard again
    other = FakeHearing({})
    other.name = "another_whisper"
    heard = run(other)
    assert other.heard == 2 and [s.wer for s in heard] == [1.0, 1.0]
    plain_run = run(None)
    assert [s.wer for s in plain_run] == [None, None]
    assert plain_run[0].pitch_hz == pytest.approx(220, rel=0.01)
