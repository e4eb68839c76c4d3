"""``dry_run=true`` in audio mode: each request names its stimulus (path, seconds, sha256), never
its bytes, and estimates its audio tokens from the model's published rate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import soundfile
from hydra import compose, initialize_config_dir

from benevaudit.llm.dry_run_audio import audio_tokens, qwen_audio_tokens
from benevaudit.probes.fairdialogue.render import Cell, cells, scenarios

CONF = Path(__file__).resolve().parents[1] / "conf"


def test_published_rates_per_model():
    assert qwen_audio_tokens(1.0) == 25 and qwen_audio_tokens(30.0) == 750
    assert audio_tokens("Qwen/Qwen2.5-Omni-7B", 2.0) == 50
    assert audio_tokens("Qwen/Qwen2-Audio-7B-Instruct", 2.0) == 50
    assert audio_tokens("gemini-2.5-flash-lite", 2.0) == 64
    assert audio_tokens("gpt-4o-audio-preview", 2.0) == 20        # 1 token per 100 ms
    assert audio_tokens("gpt-4o-mini-audio-preview", 0.34) == 3
    assert audio_tokens("glm-4-voice-9b", 2.0) is None             # no rate known


def recordings_for(folder: Path, tasks: list[str], attributes: dict,
                   rounds: int = 0) -> None:
    """One sine WAV per (item, group) a decision run with limit=1 asks, and its manifest;
    ``rounds``: also each group's spoken feedback turns (task ``feedback``)."""
    todo = cells(scenarios("decision", tasks, 1, 10),
                 {a: list(g) for a, g in attributes.items()}, neutral=False)
    groups = dict.fromkeys(c.group for c in todo)
    todo += [Cell("feedback", "", g, f"pushback-{r}", "") for g in groups
             for r in range(1, rounds + 1)]
    folder.mkdir()
    rows = []
    for i, c in enumerate(todo):
        name = f"{c.item}__{c.group}.wav"
        t = np.arange(16000 + 800 * i) / 16000
        soundfile.write(str(folder / name), 0.2 * np.sin(2 * np.pi * 200 * t), 16000)
        rows.append((c.item, c.task, c.group, name))
    pd.DataFrame(rows, columns=["item", "task", "group", "path"]).drop_duplicates().to_csv(
        folder / "manifest.csv", index=False)


def audio_dry_run(tmp_path: Path, option: str, rounds: int | None = None) -> list[dict]:
    """A dry run of ``probe=option`` in audio mode on Gemini, heard from recordings in a
    ``dir`` source (one per cell, ``rounds`` spoken pushbacks too): its requests.jsonl rows."""
    from benevaudit.pipelines import probe

    with initialize_config_dir(str(CONF), version_base="1.3"):
        base = compose("probe", overrides=[f"probe={option}"]).probe
        recordings_for(tmp_path / "rec", list(base.tasks), dict(base.attributes),
                       **({} if rounds is None else {"rounds": rounds}))
        cfg = compose("probe", overrides=[
            f"probe={option}", "target=gemini_25_flash_lite", "limit=1",
            *([] if rounds is None else [f"probe.rounds={rounds}"]),
            "dry_run.tokenizer=none", "probe.mode=audio",
            "probe.audio.source=dir", f"probe.audio.path={tmp_path / 'rec'}",
            f"paths.root_dir={tmp_path}", f"paths.output_dir={tmp_path / 'run'}",
            "progress=false", "logger=none"])
    probe.run(cfg)
    return [json.loads(line) for line in (tmp_path / "run" / "requests.jsonl").read_text()
            .splitlines()]


def test_audio_dry_run_names_each_stimulus_and_estimates_its_tokens(tmp_path: Path):
    rows = audio_dry_run(tmp_path, "fairdialogue_decision")
    manifest = pd.read_csv(tmp_path / "run" / "audio" / "manifest.csv")
    assert len(rows) == len(manifest) > 0
    text = (tmp_path / "run" / "requests.jsonl").read_text()
    assert "input_audio\": {" not in text and "UklGR" not in text      # no base64 WAV anywhere
    by_path = {str(tmp_path / "rec" / Path(p).name): (s, h) for p, s, h in
               zip(manifest["path"], manifest["seconds"], manifest["sha256"], strict=True)}
    for r in rows:
        (part,) = [p for m in r["messages"] if not isinstance(m["content"], str)
                   for p in m["content"] if p["type"] == "input_audio"]
        seconds, sha = by_path[part["path"]]
        assert (part["seconds"], part["sha256"], part["sample_rate"]) == (seconds, sha, 16000)
        assert r["audio_seconds"] == seconds and r["audio_tokens"] == round(32 * seconds)


def test_feedback_turns_are_spoken_in_the_first_turns_voice_in_a_dry_run(tmp_path: Path):
    rows = audio_dry_run(tmp_path, "fairdialogue_feedback", rounds=2)
    rounds = [r for r in rows if r["method"] == "feedback"]
    assert rounds and len(rounds) == 2 * len([r for r in rows if r["method"] == "decision"])
    for r in rounds:
        users = [m for m in r["messages"] if m["role"] == "user"]
        paths = [Path(p["path"]).name for m in users for p in m["content"]
                 if p["type"] == "input_audio"]
        group = r["group"]
        assert paths[0].endswith(f"__{group}.wav")      # the first turn, then each pushback
        assert paths[1:] == [f"pushback-{k}__{group}.wav" for k in range(1, len(paths))]
        assert all(m["content"] == "{reply}" for m in r["messages"] if m["role"] == "assistant")
