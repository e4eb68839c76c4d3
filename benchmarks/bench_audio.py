"""FairDialogue audio mode's costs, as ratios measured side by side in one process:

1. espeak-ng synthesis rate: seconds of speech per wall second, over the full stimulus set
   (every decision and recommendation scenario under every study group and neutral);
2. the stimulus caches: a second run synthesises nothing (espeak: the run's WAVs are reused)
   and sends no request (``tts_server``: a local ``/v1/audio/speech`` server counts them);
3. the ASR real-time factor (wall seconds per second of audio) of a tiny random-weight
   ``WhisperForConditionalGeneration`` (transformers' class, built from a config: no weights
   download) decoding the espeak WAVs; its figure is the pipeline's overhead, not Whisper's.

    python benchmarks/bench_audio.py [--smoke] [--out outputs/bench_audio]

``--smoke``: two scenarios per task kind, one decoding pass (a seconds-long check).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import emit, parse  # noqa: E402


def stimulus_cells(limit: int | None) -> list[Any]:
    """Every scenario of both kinds under every study group, plus neutral."""
    from benevaudit.probes.fairdialogue import render
    from benevaudit.probes.fairdialogue.decision_tasks import DECISION_TASKS
    from benevaudit.probes.fairdialogue.groups import STUDY_GROUPS
    from benevaudit.probes.fairdialogue.recommendation_tasks import RECOMMENDATION_TASKS

    out = []
    for kind, tasks in (("decision", DECISION_TASKS), ("recommendation", RECOMMENDATION_TASKS)):
        items = render.scenarios(kind, list(tasks), limit, 10)
        out += render.cells(items, {a: list(g) for a, g in STUDY_GROUPS.items()}, neutral=True)
    return out


def espeak_rate(cells: list[Any], run: Path) -> dict[str, float]:
    """Synthesis rate, then a second run over the same cells (counting synthesis calls)."""
    from benevaudit.outputs.stimuli import write_stimuli
    from benevaudit.probes.fairdialogue import audio, stimuli
    from benevaudit.probes.spec import AudioSpec

    block = AudioSpec.of({"source": "espeak", "voices": {}, "path": None,
                          "allow_outside": False, "wer_strata": [0.1, 0.3],
                          "cache": str(run / "unused"), "server": {
                              "base_url": None, "model": "tts-1", "api_key_env": None}},
                         "probe.audio")
    calls = {"n": 0}
    real = audio.synthesize

    def counted(text: str, voice: Any) -> bytes:
        calls["n"] += 1
        return real(text, voice)

    stimuli.synthesize = counted  # type: ignore[assignment]
    start = time.perf_counter()
    made = stimuli.make_stimuli(cells, block)
    write_stimuli(run, made)                          # as a probe run leaves them
    first = time.perf_counter() - start
    n_first, calls["n"] = calls["n"], 0
    start = time.perf_counter()
    stimuli.make_stimuli(cells, block, stimuli.earlier_stimuli(run))
    second = time.perf_counter() - start
    stimuli.synthesize = real  # type: ignore[assignment]
    distinct = {s.path: s.seconds for s in made.clips}   # neutral recurs under each attribute
    speech = sum(distinct.values())
    return {"stimuli": len(distinct), "speech_seconds": speech,
            "speech_s_per_wall_s": speech / first,
            "first_run_synth": n_first, "second_run_synth": calls["n"],
            "second_over_first_wall": second / first}


def tts_cache(cells: list[Any], cache: Path) -> dict[str, float]:
    """Two runs against a local speech server: requests sent in each, and the wall ratio."""
    from benevaudit.probes.fairdialogue import stimuli
    from benevaudit.probes.spec import AudioSpec
    from test_fairdialogue_stimuli import SpeechServer

    SpeechServer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), SpeechServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    block = AudioSpec.of({"source": "tts_server", "path": None, "cache": str(cache),
                          "allow_outside": False, "wer_strata": [0.1, 0.3],
                          "voices": {"male": "alloy", "female": "nova", "neutral": "alloy"},
                          "server": {"base_url": f"http://127.0.0.1:{server.server_address[1]}"
                                                 "/v1", "model": "tts-1", "api_key_env": None}},
                         "probe.audio")
    gender = [c for c in cells if c.group in ("male", "female", "neutral")]
    try:
        start = time.perf_counter()
        stimuli.make_stimuli(gender, block)
        first, sent_first = time.perf_counter() - start, len(SpeechServer.requests)
        start = time.perf_counter()
        stimuli.make_stimuli(gender, block)
        second = time.perf_counter() - start
    finally:
        server.shutdown()
        server.server_close()
    return {"clips": len(gender), "first_run_requests": sent_first,
            "second_run_requests": len(SpeechServer.requests) - sent_first,
            "second_over_first_wall": second / first}


def asr_rtf(wavs: list[Path], max_new_tokens: int) -> dict[str, float]:
    """Wall seconds per second of audio for a tiny random Whisper, greedy, one clip at a time."""
    import soundfile
    import soxr
    import torch
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    config = WhisperConfig(vocab_size=51865, d_model=64, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=2, decoder_attention_heads=2,
                           encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=1500,
                           max_target_positions=448)
    model = WhisperForConditionalGeneration(config).eval()
    features = WhisperFeatureExtractor()
    seconds = wall = 0.0
    for wav in wavs:
        data, rate = soundfile.read(str(wav), dtype="float32")
        data = soxr.resample(data, rate, 16000)
        start = time.perf_counter()
        inputs = features(data, sampling_rate=16000, return_tensors="pt")
        with torch.inference_mode():
            model.generate(inputs.input_features, max_new_tokens=max_new_tokens, do_sample=False,
                           num_beams=1)
        wall += time.perf_counter() - start
        seconds += len(data) / 16000
    return {"clips": len(wavs), "audio_seconds": seconds, "rtf": wall / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="write results.json here")
    args = parse(parser, {})
    from benevaudit.probes.fairdialogue.audio import espeak_path

    cells = stimulus_cells(1 if args.smoke else None)
    if args.smoke:
        cells = cells[: 2 * 16]
    results: dict[str, Any] = {"machine": os.environ.get("BENCH_MACHINE", "unnamed")}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if espeak_path() is None:
            print("espeak-ng is not installed (scripts/setup_audio.sh): synthesis left out")
        else:
            results["espeak"] = espeak_rate(cells, root / "espeak")
        results["tts_cache"] = tts_cache(cells, root / "tts")
        wavs = sorted((root / "espeak" / "audio").rglob("*.wav"))[: 4 if args.smoke else 32]
        if wavs:
            results["asr_tiny_whisper"] = asr_rtf(wavs, 8 if args.smoke else 32)
    print(json.dumps(results, indent=2))
    emit({f"{part}/{name}": value for part, figures in results.items()
          if isinstance(figures, dict) for name, value in figures.items()
          if isinstance(value, (int, float)) and not isinstance(value, bool)})
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
