"""``probe.audio``: where FairDialogue's spoken stimuli come from, one spec per ``source``.

``espeak`` takes ``voices`` (a closed voice per group part), ``tts_server`` its ``server``,
``cache`` and a voice name per group, ``dir`` a ``path`` and ``allow_outside``; all share the
intelligibility audit's ``wer_strata``. The shipped block holds every source's keys, so that
``probe.audio.source=dir probe.audio.path=...`` switches it: a key of another source is taken
(and ignored) while it says nothing — null, empty, false, a server with no ``base_url``, the
clip cache folder — and refused, naming its source, once it is set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator
from typing_extensions import Self

from benevaudit.errors import ConfigError
from benevaudit.specs import Positive, PositiveInt, Spec

Source = Literal["espeak", "tts_server", "dir"]


class ServerSpec(Spec):
    """``probe.audio.server``: the ``/v1/audio/speech`` endpoint of ``source: tts_server``."""

    base_url: Optional[str]
    model: str
    api_key_env: Optional[str]            # the variable holding the key; null: no key needed


class EspeakVoice(Spec):
    """One group part's espeak-ng voice (``-v language[+variant] -p pitch -s rate``); a key
    left out keeps the default voice's (``probes/fairdialogue/audio.py``)."""

    language: Optional[str] = None
    variant: Optional[str] = None
    pitch: Optional[Annotated[int, Field(ge=0, le=99)]] = None     # espeak-ng's 0-99
    rate: Optional[PositiveInt] = None                             # words per minute

    def settings(self) -> dict[str, Any]:
        """The keys the voice sets, over the default voice's."""
        return self.model_dump(exclude_unset=True)


class AudioSpec(Spec):
    """What every source shares: the ``source`` tag and the intelligibility audit's strata.
    :meth:`of` reads a block into the spec of its source."""

    source: Source
    # the intelligibility audit's strata: ascending edges of the stimuli's Whisper WER
    wer_strata: Annotated[list[Positive], Field(min_length=1, description=(
        "a non-empty ascending list of WER edges, each a number > 0, e.g. [0.1, 0.3]"))]

    @classmethod
    def of(cls, data: Any, key: str = "") -> Self:
        """The block read as its source's spec (``key``: where it sits, ``probe.audio``)."""
        if cls is not AudioSpec:
            return super().of(data, key)
        head, _, last = key.rpartition(".")
        return AudioBlock.of({"audio": data}, head).audio   # type: ignore[return-value]

    @model_validator(mode="before")
    @classmethod
    def others_keys(cls, data: Any) -> Any:
        """Keys of other sources that say nothing are dropped; a set one is left for the
        unknown-key refusal, which :meth:`foreign_key` words."""
        if not isinstance(data, dict) or cls is AudioSpec:
            return data
        return {k: v for k, v in data.items()
                if k in cls.model_fields or k not in IDLE or not IDLE[k](v)}

    @classmethod
    def foreign_key(cls, key: str, full: str) -> str | None:
        owners = [name for name, spec in SOURCES.items() if key in spec.model_fields]
        if not owners or cls is AudioSpec:
            return None
        source = cls.model_fields["source"].annotation.__args__[0]   # type: ignore[union-attr]
        where = full.rpartition(".")[0]
        return (f"the {source} source takes no {key} (keys of {', '.join(owners)}); drop it or "
                f"set it to null, or use that source ({where}.source={owners[0]})")

    @model_validator(mode="after")
    def strata_ascend(self) -> Self:
        edges = list(self.wer_strata)
        if edges != sorted(set(edges)):
            raise ConfigError(f"probe.audio.wer_strata={edges}: the WER edges must ascend, "
                              "each once (e.g. [0.1, 0.3])")
        return self


class EspeakAudio(AudioSpec):
    """``source: espeak``: espeak-ng voices, per group part over the defaults."""

    source: Literal["espeak"]
    voices: dict[str, EspeakVoice]


class ServerAudio(AudioSpec):
    """``source: tts_server``: an OpenAI-compatible ``/v1/audio/speech`` endpoint."""

    source: Literal["tts_server"]
    voices: dict[str, str]                # a voice name per group part (or whole group)
    server: ServerSpec
    cache: str                            # the clip cache folder


class DirAudio(AudioSpec):
    """``source: dir``: the user's recordings, as ``manifest.csv`` in ``path`` lists them."""

    source: Literal["dir"]
    path: Optional[str]                   # the folder holding manifest.csv
    # read manifest paths that lead out of its folder (absolute, ../, symlinks out); off,
    # each is refused before it is read, since the clips are sent to the target
    allow_outside: bool


SOURCES: dict[str, type[AudioSpec]] = {"espeak": EspeakAudio, "tts_server": ServerAudio,
                                       "dir": DirAudio}
# what a key of another source holds while it says nothing (the shipped block's values)
IDLE: dict[str, Callable[[Any], bool]] = {
    "voices": lambda v: not v,
    "path": lambda v: v is None,
    "allow_outside": lambda v: v in (None, False),
    "server": lambda v: v is None or isinstance(v, dict) and v.get("base_url") is None,
    "cache": lambda v: True,              # a folder nothing is written to unless fetched
}

if TYPE_CHECKING:
    AudioSource = Union[EspeakAudio, ServerAudio, DirAudio]
else:
    AudioSource = Annotated[Union[EspeakAudio, ServerAudio, DirAudio],
                            Field(discriminator="source")]


class AudioBlock(Spec):
    """A ``probe.audio`` block alone, read as a probe holds it."""

    audio: AudioSource
