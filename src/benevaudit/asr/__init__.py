"""Speech to text for spoken replies: the ``asr`` config group.

A target that answers in audio (Qwen2.5-Omni's talker, GPT-4o Audio) is scored on what it
said: ``replies`` keeps each reply's WAV (written by ``benevaudit.outputs.spoken_replies`` as
``audio_out/<task>/<item>__<group>.wav`` in the run) and ``whisper`` transcribes it with transformers' automatic-speech-recognition pipeline
(``asr=whisper_large_v3``; ``asr=none`` keeps the API's own transcript or the text reply).
:mod:`benevaudit.metrics.wer` sets Whisper's transcripts beside the API's. ``replies.Hearing``
is one Whisper for a whole run: FairDialogue's spoken stimuli (its intelligibility audit), then
the spoken replies. Importing this package is cheap: transformers loads only when a transcriber
is built.

Room ``asr`` (layer 1) may import only the core and ``llm`` (its audio decoding).
"""

from benevaudit.asr.spec import AsrSpec

__all__ = ["AsrSpec"]
