"""Where audio mode's spoken stimuli come from (``probe.audio.source``), checked before any model.

- ``espeak``: espeak-ng speaks each utterance in a voice per group (:mod:`.audio`).
- ``tts_server``: any OpenAI-compatible ``/v1/audio/speech`` endpoint (a local TTS server or a
  hosted voice), through the official ``openai`` client; ``probe.audio.voices`` names a voice per
  group part (or per whole group). Each clip is checked and cached under ``probe.audio.cache``
  by the hash of its text, voice, model and server, so a second run synthesises nothing and
  sends nothing (:mod:`.tts`: a reply or a cached clip that is not audio is asked again).
- ``dir``: the user's own recordings (the study's Index-TTS and ElevenLabs renders):
  ``probe.audio.path`` holds ``manifest.csv`` with columns item, task, group, path (relative,
  kept inside the folder unless ``probe.audio.allow_outside``) and optionally sha256
  (:mod:`.recordings`).

Every stimulus is opened with soundfile before the target is built: an unreadable, empty or
non-audio file, a missing manifest row or a voice the server refuses is one ``error:`` line.
The run writes ``audio/manifest.csv`` (one row per stimulus, :data:`MANIFEST_COLUMNS`), with the
intelligibility audit's figures (:mod:`.intelligibility`): the text spoken, the speech span,
speaking rate and mean pitch, and under ``asr=whisper_large_v3`` Whisper's transcript and its
word error rate against the text.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import soundfile

from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run_audio import register_stimuli
from benevaudit.probes.fairdialogue.audio import synthesize, voice_for
from benevaudit.probes.fairdialogue.groups import NEUTRAL, group_parts
from benevaudit.probes.fairdialogue.intelligibility import Audit, Hears, audit, stimulus_metrics
from benevaudit.probes.fairdialogue.recordings import check_digest, read_recordings
from benevaudit.probes.fairdialogue.render import Cell
from benevaudit.probes.fairdialogue.tts import cached_clip, speech_client
from benevaudit.probes.spec import AudioSpec

MANIFEST_COLUMNS = ("item", "task", "group", "source", "voice", "seconds", "sample_rate",
                    "sha256", "path",   # path: relative to the run when inside it
                    "text", "speech_seconds", "words_per_second", "pitch_hz", "asr_model",
                    "transcript", "wer")   # the intelligibility audit (.intelligibility)


@dataclass(frozen=True)
class Stimulus:
    """One spoken utterance on disk, as ``audio/manifest.csv`` lists it."""

    item: str
    task: str
    group: str
    source: str
    voice: str
    seconds: float
    sample_rate: int
    sha256: str
    path: Path
    text: str = ""                        # what it says
    speech_seconds: float | None = None   # the audit's figures (.intelligibility.Audit)
    words_per_second: float | None = None
    pitch_hz: float | None = None
    asr_model: str | None = None
    transcript: str | None = None
    wer: float | None = None


def checked(path: Path, what: str) -> tuple[float, int]:
    """Seconds and sample rate of an audio file, or a ConfigError naming it."""
    if not path.is_file():
        raise ConfigError(f"{what}: no audio file at {path}")
    try:
        info = soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as e:   # not audio, or unreadable
        raise ConfigError(f"{what}: {path} is not a readable audio file ({e})") from None
    if info.frames == 0:
        raise ConfigError(f"{what}: {path} holds no audio (0 frames)")
    return info.frames / info.samplerate, int(info.samplerate)


def wav_bytes(path: Path) -> bytes:
    """The file as WAV bytes: a WAV as it is, another format (FLAC, OGG) converted, because
    the ``input_audio`` part is declared ``format: wav``."""
    if soundfile.info(str(path)).format == "WAV":
        return path.read_bytes()
    data, rate = soundfile.read(str(path), always_2d=True)
    buf = io.BytesIO()
    soundfile.write(buf, data, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def stimulus(cell: Cell, source: str, voice: str, path: Path, what: str) -> Stimulus:
    seconds, rate = checked(path, what)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Stimulus(cell.item, cell.task, cell.group, source, voice, round(seconds, 3), rate,
                    digest, path, cell.utterance)


def espeak_stimuli(cells: Sequence[Cell], spec: AudioSpec, run_dir: Path) -> list[Stimulus]:
    """espeak-ng WAVs under the run's ``audio/<task>/``, reused when present."""
    out = []
    for c in cells:
        voice = voice_for(c.group, spec.voices)
        path = run_dir / "audio" / c.task / f"{c.item}__{c.group}.wav"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(synthesize(c.utterance, voice))
        label = f"{voice.name} pitch={voice.pitch} rate={voice.rate}"
        out.append(stimulus(c, "espeak", label, path, "espeak-ng output"))
    return out


def server_voice(group: str, voices: Mapping[str, Any]) -> str:
    """The TTS voice of a group: its own entry, else the one voice its parts name."""
    if group in voices:
        return str(voices[group])
    key = "neutral" if group == NEUTRAL else None
    parts = [key] if key else group_parts(group)
    named = {str(voices[p]) for p in parts if p in voices}
    if len(named) != 1:
        raise ConfigError(f"probe.audio.voices: group {group!r} needs one voice "
                          f"(its own entry or one of its parts {parts}); found {sorted(named)}")
    return named.pop()


def server_stimuli(cells: Sequence[Cell], spec: AudioSpec) -> list[Stimulus]:
    """Clips from the TTS server, each checked and cached by hash (:mod:`.tts`); a cached
    clip sends no request."""
    server, cache = spec.server, Path(spec.cache).expanduser()
    if not server.base_url:
        raise ConfigError("probe.audio.server.base_url: source tts_server needs the "
                          "endpoint's base URL (e.g. http://localhost:8880/v1)")
    clients: list[Any] = []

    def client() -> Any:        # built on the first clip the cache lacks
        if not clients:
            clients.append(speech_client(server))
        return clients[0]

    out = []
    for c in cells:
        voice = server_voice(c.group, spec.voices)
        path = cached_clip(cache, server, c.utterance, voice, client)
        out.append(stimulus(c, "tts_server", voice, path,
                            f"tts_server voice {voice!r} ({c.task}/{c.item}, {c.group})"))
    return out


def dir_stimuli(cells: Sequence[Cell], spec: AudioSpec) -> list[Stimulus]:
    """The user's recordings, as ``manifest.csv`` in ``probe.audio.path`` lists them
    (:mod:`.recordings`: every path checked to stay in its folder before any is read)."""
    manifest, rows = read_recordings(spec)
    out = []
    for c in cells:
        row = rows.get((c.item, c.task, c.group))
        if row is None:
            raise ConfigError(f"{manifest}: no row for item {c.item!r}, group {c.group!r} "
                              f"(task {c.task!r}); every asked cell needs a recording")
        made = stimulus(c, "dir", "", row.path, f"{manifest} ({c.item}, {c.group})")
        check_digest(row, made.sha256)
        out.append(made)
    return out


def make_stimuli(cells: Sequence[Cell], spec: AudioSpec, run_dir: Path,
                 append: bool = False, hears: Hears | None = None) -> list[Stimulus]:
    """Every cell's stimulus, checked and audited (transcribed when ``hears`` is given), and
    ``audio/manifest.csv`` written (``append``: added to the rows already there, as the
    spoken feedback turns are)."""
    if spec.source == "espeak":
        out = espeak_stimuli(cells, spec, run_dir)
    elif spec.source == "tts_server":
        out = server_stimuli(cells, spec)
    else:
        out = dir_stimuli(cells, spec)
    out = audited(out, hears, run_dir)
    write_manifest(out, run_dir, append)
    register_stimuli({hashlib.sha256(wav_bytes(s.path)).hexdigest(): shown(s.path, run_dir)
                      for s in out})     # what a dry run's requests.jsonl names them by
    return out


def audited(stimuli: Sequence[Stimulus], hears: Hears | None, run_dir: Path
            ) -> list[Stimulus]:
    """The stimuli with the audit's figures; a stimulus asked under several attributes (the
    neutral rendering) is measured and transcribed once, and one the run's manifest already
    audited (the same clip, text and transcriber) is not measured again, so a rerun costs
    nothing."""
    first: dict[tuple[str, str, str], Stimulus] = {}
    for s in stimuli:
        first.setdefault((s.item, s.task, s.group), s)
    known = known_figures(run_dir, hears)
    ids = {k: (*k, s.sha256, s.text) for k, s in first.items()}   # what the figures depend on
    todo = {k: s for k, s in first.items() if ids[k] not in known}
    fresh = dict(zip(todo, audit([s.text for s in todo.values()],
                                 [s.path for s in todo.values()], hears), strict=True))
    figures = {k: fresh.get(k) or known[ids[k]] for k in first}
    return [replace(s, **figures[(s.item, s.task, s.group)]._asdict()) for s in stimuli]


def known_figures(run_dir: Path, hears: Hears | None) -> dict[tuple[str, ...], Audit]:
    """The audit figures of the run's manifest by (item, task, group, sha256, text), where
    they were made by the same transcriber (or none)."""
    table = read_manifest(run_dir)
    if table is None or "pitch_hz" not in table.columns:
        return {}
    name = hears.name if hears is not None else ""

    def number(value: str) -> float:
        return float(value) if value != "" else float("nan")

    return {(r["item"], r["task"], r["group"], r["sha256"], r["text"]): Audit(
        number(r["speech_seconds"]), number(r["words_per_second"]), number(r["pitch_hz"]),
        r["transcript"] if name else None, name or None, number(r["wer"]) if name else None)
        for r in table.to_dict("records") if r["asr_model"] == name}


def write_manifest(stimuli: Sequence[Stimulus], run_dir: Path, append: bool = False) -> None:
    path = run_dir / "audio" / "manifest.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = pd.DataFrame([{**asdict(s), "path": shown(s.path, run_dir)} for s in stimuli],
                        columns=list(MANIFEST_COLUMNS))   # neutral recurs under each attribute
    rows = rows.drop_duplicates(["item", "task", "group"])
    before = read_manifest(run_dir) if append else None
    pd.concat([before, rows]).to_csv(path, index=False) if before is not None \
        else rows.to_csv(path, index=False)


def shown(path: Path, run_dir: Path) -> str:
    """A stimulus path as records name it: relative to the run when inside it."""
    try:
        return path.resolve().relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def read_manifest(run_dir: Path) -> pd.DataFrame | None:
    path = run_dir / "audio" / "manifest.csv"
    return pd.read_csv(path, dtype=str, keep_default_na=False) if path.is_file() else None


def stimulus_paths(run_dir: Path) -> dict[tuple[str, str, str], str]:
    """``{(item, task, group): path}`` from the run's manifest (empty in text mode)."""
    table = read_manifest(run_dir)
    if table is None:
        return {}
    return {(r.item, r.task, r.group): str(r.path) for r in table.itertuples()}


def stimulus_wers(run_dir: Path) -> dict[tuple[str, str, str], float]:
    """``{(item, task, group): WER of its stimulus}`` where the manifest has one."""
    table = read_manifest(run_dir)
    if table is None or "wer" not in table.columns:
        return {}
    wers = pd.to_numeric(table["wer"], errors="coerce")
    return {(r.item, r.task, r.group): float(w) for r, w in zip(table.itertuples(), wers)
            if w == w}


def audio_metrics(run_dir: Path) -> dict[str, float]:
    """``fairness/audio/minutes``: distinct speech the run's manifest lists (Table 1 of the
    study counts ~1,700 minutes); nothing in text mode."""
    table = read_manifest(run_dir)
    if table is None:
        return {}
    seconds = table.drop_duplicates("sha256")["seconds"].astype(float).sum()
    return {"fairness/audio/minutes": float(seconds / 60.0), **stimulus_metrics(table)}


PUSHBACK_TASK = "feedback"


def spoken_pushbacks(pushbacks: Sequence[str], groups: Sequence[str], spec: AudioSpec,
                     run_dir: Path, hears: Hears | None = None) -> dict[tuple[str, int], Path]:
    """Table 3's feedback turns spoken in each group's voice, the first turn's: ``{(group,
    round): wav}``. A ``dir`` source lists them as task ``feedback``, item ``pushback-<round>``."""
    cells = [Cell(PUSHBACK_TASK, "", g, f"pushback-{r}", text)
             for g in groups for r, text in enumerate(pushbacks, start=1)]
    made = make_stimuli(cells, spec, run_dir, append=True, hears=hears)
    return {(s.group, int(s.item.rsplit("-", 1)[1])): s.path for s in made}
