"""What a spoken stimulus sounds like, measured from its waveform: where the speech is, how fast
it goes and how high the voice is.

The clip is resampled to 16 kHz and cut into 40 ms frames every 10 ms. A frame is *sound* when
the RMS of its central 10 ms is within 35 dB of the loudest frame's; the speech span is 10 ms per
frame from the first sound frame to the last, so the silence a synthesiser adds before and
after is left out. The
speaking rate is the text's words (whitespace-separated) per second of that span.

Pitch is an autocorrelation estimate per frame: the normalised cross-correlation of the frame
with the signal ``τ`` samples later, for lags between 1/400 s and 1/60 s (F0 from 60 to 400 Hz,
the range of adult and children's speaking voices). A sound frame is *voiced* when its best
correlation reaches 0.6; its period is the first local peak within 10% of that best (a
periodic signal correlates as well at 2T, 3T, ..., so the first such peak is the period, not a
multiple), refined by a parabola through the peak and its neighbours. The mean pitch is the
mean F0 over voiced frames; a clip with none (silence, noise, whisper) has NaN.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from benevaudit.llm.audio_in import Clip, resample

RATE = 16000                 # Hz: every measure is taken at Whisper's rate
FRAME = 640                  # samples: 40 ms
HOP = 160                    # samples: 10 ms
F0_RANGE = (60.0, 400.0)     # Hz
SILENCE_DB = 35.0            # a frame this far under the loudest is silence
VOICED = 0.6                 # the normalised correlation a voiced frame reaches
FIRST_PEAK = 0.9             # the period: the first peak within this share of the best


class Acoustics(NamedTuple):
    """One clip's measures; ``pitch_hz`` is NaN where no frame is voiced."""

    speech_seconds: float    # from the first sound frame to the last
    pitch_hz: float          # mean F0 over voiced frames
    voiced_frames: int


def frames(samples: np.ndarray, length: int) -> np.ndarray:
    """``[F, length]`` windows of ``samples`` every :data:`HOP` samples (zero-padded at the
    end, so a short clip still has one)."""
    n = max(1, 1 + (len(samples) - FRAME + HOP - 1) // HOP)
    padded = np.concatenate([samples, np.zeros(n * HOP + length)]).astype(np.float64)
    starts = np.arange(n) * HOP
    return padded[starts[:, None] + np.arange(length)[None, :]]


def loud(windows: np.ndarray) -> np.ndarray:
    """``[F]`` whether each frame is sound, not silence, by the RMS of its central hop."""
    centre = windows[:, (FRAME - HOP) // 2:(FRAME + HOP) // 2]
    rms = np.sqrt(np.mean(centre ** 2, axis=1))
    if not rms.max() > 0:
        return np.zeros(len(rms), dtype=bool)
    return rms >= rms.max() * 10 ** (-SILENCE_DB / 20)


def correlations(windows: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """``[F, L]`` normalised cross-correlation of each frame's first :data:`FRAME` samples with
    the samples ``lag`` later: Σ a_j b_{j+τ} / sqrt(Σ a_j² · Σ b_{j+τ}²)."""
    size = 1 << int(np.ceil(np.log2(windows.shape[1] + FRAME)))
    head = np.fft.rfft(windows[:, :FRAME], size)
    whole = np.fft.rfft(windows, size)
    cross = np.fft.irfft(np.conj(head) * whole, size)[:, lags]                 # [F, L]
    energy = np.concatenate([np.zeros((len(windows), 1)),
                             np.cumsum(windows ** 2, axis=1)], axis=1)        # [F, T + 1]
    later = energy[:, lags + FRAME] - energy[:, lags]                          # [F, L]
    own = energy[:, FRAME:FRAME + 1]                                           # [F, 1]
    return cross / np.sqrt(np.maximum(own * later, 1e-20))


def period(row: np.ndarray, lags: np.ndarray) -> float:
    """The period in samples of one voiced frame: the first local peak within
    :data:`FIRST_PEAK` of the best, refined by a parabola through it and its neighbours."""
    best = row.max()
    inner = (row[1:-1] >= row[:-2]) & (row[1:-1] >= row[2:]) & (row[1:-1] >= FIRST_PEAK * best)
    peaks = np.flatnonzero(inner) + 1
    i = int(peaks[0]) if len(peaks) else int(np.argmax(row))
    if 0 < i < len(row) - 1:
        left, mid, right = row[i - 1], row[i], row[i + 1]
        bend = left - 2 * mid + right
        shift = 0.5 * (left - right) / bend if bend < 0 else 0.0
        return float(lags[i] + shift)
    return float(lags[i])


def measure(clip: Clip) -> Acoustics:
    """The speech span, the mean pitch and the voiced frames of one clip."""
    samples = resample(clip, RATE).samples.astype(np.float64)
    samples = samples - samples.mean()
    lags = np.arange(int(RATE / F0_RANGE[1]), int(np.ceil(RATE / F0_RANGE[0])) + 1)
    windows = frames(samples, FRAME + int(lags[-1]))                           # [F, FRAME + max]
    sound = loud(windows)
    if not sound.any():
        return Acoustics(0.0, float("nan"), 0)
    where = np.flatnonzero(sound)
    span = (where[-1] - where[0] + 1) * HOP
    nccf = correlations(windows[sound], lags)                                  # [S, L]
    voiced = nccf.max(axis=1) >= VOICED
    f0 = [RATE / period(row, lags) for row in nccf[voiced]]
    return Acoustics(float(span / RATE), float(np.mean(f0)) if f0 else float("nan"), int(voiced.sum()))


def words_per_second(text: str, seconds: float) -> float:
    """Whitespace-separated words of ``text`` per second of speech; NaN without speech."""
    return len(text.split()) / seconds if seconds > 0 else float("nan")
