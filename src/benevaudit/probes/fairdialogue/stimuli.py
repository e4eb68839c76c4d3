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

Every stimulus is read and opened with soundfile before the target is built: an unreadable,
empty or non-audio file, a missing manifest row or a voice the server refuses is one ``error:``
line. The stimuli travel in memory (:class:`Stimuli`: each clip's bytes, manifest row and
intelligibility figures, :mod:`.intelligibility`, and the target's spoken replies);
``benevaudit.outputs.stimuli`` writes them (``audio/<task>/`` and ``audio/manifest.csv``,
:data:`MANIFEST_COLUMNS`), ``benevaudit.outputs.spoken_replies`` the replies (``audio_out/``). A rerun in the same
run directory starts from what the earlier run left (:func:`earlier_stimuli`): its clips are
sent as they are, and an unchanged clip is not measured or transcribed again.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import soundfile

from benevaudit.asr.replies import SpokenReply
from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run_audio import register_stimuli
from benevaudit.probes.fairdialogue.audio import synthesize, voice_for
from benevaudit.probes.fairdialogue.intelligibility import Audit, Hears, audit, stimulus_metrics
from benevaudit.probes.fairdialogue.recordings import check_digest, read_recordings
from benevaudit.probes.fairdialogue.render import Cell
from benevaudit.probes.fairdialogue.tts import cached_clip, server_voice, speech_client
from benevaudit.probes.audio_spec import AudioSpec, DirAudio, EspeakAudio, ServerAudio

MANIFEST = "audio/manifest.csv"        # in the run directory
MANIFEST_COLUMNS = ("item", "task", "group", "source", "voice", "seconds", "sample_rate",
                    "sha256", "path",   # path: relative to the run when inside it
                    "text", "speech_seconds", "words_per_second", "pitch_hz", "asr_model",
                    "transcript", "wer")   # the intelligibility audit (.intelligibility)
Key = tuple[str, str, str]             # (item, task, group)


@dataclass(frozen=True)
class Stimulus:
    """One spoken utterance: its bytes and its ``audio/manifest.csv`` row."""

    item: str
    task: str
    group: str
    source: str
    voice: str
    seconds: float
    sample_rate: int
    sha256: str                           # of ``data``
    path: str                             # as records name it: run-relative when the run's own
    data: bytes = field(default=b"", repr=False)   # the clip as made or read (WAV, FLAC, ...)
    text: str = ""                        # what it says
    speech_seconds: float | None = None   # the audit's figures (.intelligibility.Audit)
    words_per_second: float | None = None
    pitch_hz: float | None = None
    asr_model: str | None = None
    transcript: str | None = None
    wer: float | None = None

    @property
    def own(self) -> bool:
        """Made for this run (espeak-ng), so kept under its ``audio/``; a cached or recorded
        clip stays where it is and is named by its absolute path."""
        return not Path(self.path).is_absolute()


@dataclass(frozen=True)
class Stimuli:
    """A run's spoken stimuli, in the order asked (a neutral rendering recurs under each
    attribute), and the target's spoken replies to them (``audio_out/``, in the order heard);
    ``+`` adds the feedback turns' to the first turns'."""

    clips: tuple[Stimulus, ...] = ()
    replies: tuple[SpokenReply, ...] = ()

    def __add__(self, other: Stimuli) -> Stimuli:
        return Stimuli(self.clips + other.clips, self.replies + other.replies)

    def manifest(self) -> pd.DataFrame:
        """``audio/manifest.csv``: one row per (item, task, group)."""
        rows = pd.DataFrame([asdict(s) for s in self.clips], columns=list(MANIFEST_COLUMNS))
        return rows.drop_duplicates(["item", "task", "group"])

    def paths(self) -> dict[Key, str]:
        """``{(item, task, group): path}`` as records name them."""
        return {(s.item, s.task, s.group): s.path for s in self.clips}

    def wers(self) -> dict[Key, float]:
        """``{(item, task, group): WER of its stimulus}`` where the audit has one."""
        return {(s.item, s.task, s.group): float(s.wer) for s in self.clips
                if s.wer is not None and s.wer == s.wer}


@dataclass(frozen=True)
class Earlier:
    """What an earlier run left in this run directory (``folder``; None: nothing): its manifest
    and its espeak-ng clips, read when asked for."""

    folder: Path | None = None
    manifest: pd.DataFrame | None = None

    def clip(self, path: str) -> bytes | None:
        """The bytes of the run-relative ``path`` an earlier run made, or None."""
        file = self.folder / path if self.folder is not None else None
        return file.read_bytes() if file is not None and file.is_file() else None


def earlier_stimuli(run_dir: Path) -> Earlier:
    """The stimuli an earlier run left in ``run_dir``, read before this run makes any."""
    path = run_dir / MANIFEST
    table = pd.read_csv(path, dtype=str, keep_default_na=False) if path.is_file() else None
    return Earlier(run_dir, table)


def checked(data: bytes, name: str, what: str) -> tuple[float, int]:
    """Seconds and sample rate of an audio clip, or a ConfigError naming it."""
    try:
        info = soundfile.info(io.BytesIO(data))
    except (RuntimeError, TypeError, soundfile.LibsndfileError) as e:   # not audio
        raise ConfigError(f"{what}: {name} is not a readable audio file ({e})") from None
    if info.frames == 0:
        raise ConfigError(f"{what}: {name} holds no audio (0 frames)")
    return info.frames / info.samplerate, int(info.samplerate)


def read_file(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise ConfigError(f"{what}: no audio file at {path}")
    return path.read_bytes()


def wav_bytes(data: bytes) -> bytes:
    """The clip as WAV bytes: a WAV as it is, another format (FLAC, OGG) converted, because
    the ``input_audio`` part is declared ``format: wav``."""
    if soundfile.info(io.BytesIO(data)).format == "WAV":
        return data
    samples, rate = soundfile.read(io.BytesIO(data), always_2d=True)
    buf = io.BytesIO()
    soundfile.write(buf, samples, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def stimulus(cell: Cell, source: str, voice: str, data: bytes, path: str, what: str
             ) -> Stimulus:
    seconds, rate = checked(data, path, what)
    return Stimulus(cell.item, cell.task, cell.group, source, voice, round(seconds, 3), rate,
                    hashlib.sha256(data).hexdigest(), path, data, cell.utterance)


def espeak_stimuli(cells: Sequence[Cell], spec: EspeakAudio, earlier: Earlier
                   ) -> list[Stimulus]:
    """espeak-ng clips named ``audio/<task>/<item>__<group>.wav``; one an earlier run in this
    directory made is taken as it is."""
    voices = {part: voice.settings() for part, voice in spec.voices.items()}
    out = []
    for c in cells:
        voice = voice_for(c.group, voices)
        path = f"audio/{c.task}/{c.item}__{c.group}.wav"
        data = earlier.clip(path) or synthesize(c.utterance, voice)
        label = f"{voice.name} pitch={voice.pitch} rate={voice.rate}"
        out.append(stimulus(c, "espeak", label, data, path, "espeak-ng output"))
    return out


def server_stimuli(cells: Sequence[Cell], spec: ServerAudio) -> list[Stimulus]:
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
        what = f"tts_server voice {voice!r} ({c.task}/{c.item}, {c.group})"
        out.append(stimulus(c, "tts_server", voice, read_file(path, what),
                            str(path.resolve()), what))
    return out


def dir_stimuli(cells: Sequence[Cell], spec: DirAudio) -> list[Stimulus]:
    """The user's recordings, as ``manifest.csv`` in ``probe.audio.path`` lists them
    (:mod:`.recordings`: every path checked to stay in its folder before any is read)."""
    manifest, rows = read_recordings(spec)
    out = []
    for c in cells:
        row = rows.get((c.item, c.task, c.group))
        if row is None:
            raise ConfigError(f"{manifest}: no row for item {c.item!r}, group {c.group!r} "
                              f"(task {c.task!r}); every asked cell needs a recording")
        what = f"{manifest} ({c.item}, {c.group})"
        made = stimulus(c, "dir", "", read_file(row.path, what), str(row.path.resolve()), what)
        check_digest(row, made.sha256)
        out.append(made)
    return out


def make_stimuli(cells: Sequence[Cell], spec: AudioSpec, earlier: Earlier = Earlier(),
                 hears: Hears | None = None) -> Stimuli:
    """Every cell's stimulus, checked and audited (transcribed when ``hears`` is given);
    ``earlier``: what an earlier run in this directory left, reused."""
    if isinstance(spec, EspeakAudio):
        made = espeak_stimuli(cells, spec, earlier)
    elif isinstance(spec, ServerAudio):
        made = server_stimuli(cells, spec)
    elif isinstance(spec, DirAudio):
        made = dir_stimuli(cells, spec)
    else:
        raise TypeError(f"probe.audio: {type(spec).__name__} names no source")
    out = audited(made, hears, earlier)
    register_stimuli({hashlib.sha256(wav_bytes(s.data)).hexdigest(): s.path
                      for s in out})     # what a dry run's requests.jsonl names them by
    return Stimuli(tuple(out))


def audited(stimuli: Sequence[Stimulus], hears: Hears | None, earlier: Earlier
            ) -> list[Stimulus]:
    """The stimuli with the audit's figures; a stimulus asked under several attributes (the
    neutral rendering) is measured and transcribed once, and one the earlier manifest already
    audited (the same clip, text and transcriber) is not measured again, so a rerun costs
    nothing."""
    first: dict[Key, Stimulus] = {}
    for s in stimuli:
        first.setdefault((s.item, s.task, s.group), s)
    known = known_figures(earlier.manifest, hears)
    ids = {k: (*k, s.sha256, s.text) for k, s in first.items()}   # what the figures depend on
    todo = {k: s for k, s in first.items() if ids[k] not in known}
    fresh = dict(zip(todo, audit([s.text for s in todo.values()],
                                 [s.data for s in todo.values()], hears,
                                 [s.path for s in todo.values()]), strict=True))
    figures = {k: fresh.get(k) or known[ids[k]] for k in first}
    return [replace(s, **figures[(s.item, s.task, s.group)]._asdict()) for s in stimuli]


def known_figures(table: pd.DataFrame | None, hears: Hears | None
                  ) -> dict[tuple[str, ...], Audit]:
    """The audit figures of an earlier manifest by (item, task, group, sha256, text), where
    they were made by the same transcriber (or none)."""
    if table is None or "pitch_hz" not in table.columns:
        return {}
    name = hears.name if hears is not None else ""

    def number(value: str) -> float:
        return float(value) if value != "" else float("nan")

    return {(r["item"], r["task"], r["group"], r["sha256"], r["text"]): Audit(
        number(r["speech_seconds"]), number(r["words_per_second"]), number(r["pitch_hz"]),
        r["transcript"] if name else None, name or None, number(r["wer"]) if name else None)
        for r in table.to_dict("records") if r["asr_model"] == name}


def audio_metrics(stimuli: Stimuli) -> dict[str, float]:
    """``fairness/audio/minutes``: distinct speech the run's stimuli hold (Table 1 of the
    study counts ~1,700 minutes), and the audit's means; nothing in text mode."""
    if not stimuli.clips:
        return {}
    table = stimuli.manifest()
    seconds = table.drop_duplicates("sha256")["seconds"].astype(float).sum()
    return {"fairness/audio/minutes": float(seconds / 60.0), **stimulus_metrics(table)}


PUSHBACK_TASK = "feedback"


def spoken_pushbacks(pushbacks: Sequence[str], groups: Sequence[str], spec: AudioSpec,
                     earlier: Earlier = Earlier(), hears: Hears | None = None) -> Stimuli:
    """Table 3's feedback turns spoken in each group's voice, the first turn's. A ``dir``
    source lists them as task ``feedback``, item ``pushback-<round>``."""
    cells = [Cell(PUSHBACK_TASK, "", g, f"pushback-{r}", text)
             for g in groups for r, text in enumerate(pushbacks, start=1)]
    return make_stimuli(cells, spec, earlier, hears)


def pushback_wavs(stimuli: Stimuli) -> dict[tuple[str, int], bytes]:
    """``{(group, round): WAV bytes}`` of :func:`spoken_pushbacks`' stimuli."""
    return {(s.group, int(s.item.rsplit("-", 1)[1])): wav_bytes(s.data) for s in stimuli.clips}
