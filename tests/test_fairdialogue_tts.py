"""The TTS clip cache keeps no bad clip: a server that answers HTTP 200 with bytes that are not
audio is asked again and, past its retries, ends the run with one ``ServerError`` naming the
URL, the clips already received kept; a cached clip that is not audio (an earlier release
cached it) is dropped with a warning and asked again, so a mended server mends the cache."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile

from benevaudit.errors import ServerError
from benevaudit.probes.fairdialogue import tts
from benevaudit.probes.spec import ServerSpec
from test_fairdialogue_stimuli import CELLS, audio_block, make_stimuli

HTML = b"<html><body>502 Bad Gateway</body></html>"


def wav(seconds: float = 0.5, rate: int = 16000) -> bytes:
    buf = io.BytesIO()
    soundfile.write(buf, np.full(int(rate * seconds), 0.1), rate, format="WAV")
    return buf.getvalue()


BAD_CLIPS = {"html": HTML, "empty wav": wav(0.0), "cut off": wav()[:30], "json": b'{"ok": 1}'}


class Speech:
    """``POST /v1/audio/speech`` answering ``reply(voice, call number)`` with HTTP 200."""

    def __init__(self, reply: Callable[[str, int], bytes]) -> None:
        self.voices: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                voice = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["voice"]
                outer.voices.append(voice)
                data = reply(voice, len(outer.voices))
                self.send_response(200)
                self.send_header("Content-Type", "audio/wav")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def speech() -> Iterator[Callable[[Callable[[str, int], bytes]], Speech]]:
    servers: list[Speech] = []
    yield lambda reply: servers.append(Speech(reply)) or servers[-1]
    for s in servers:
        s.httpd.shutdown()
        s.httpd.server_close()


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry's backoff is the client's (0.5 s doubling); the tests need not wait it."""
    from benevaudit.llm import server_replies

    monkeypatch.setattr(server_replies.time, "sleep", lambda s: None)


def block(url: str, cache: Path) -> dict[str, Any]:
    return audio_block(source="tts_server", voices={"male": "alloy", "female": "nova"},
                       server={"base_url": url, "model": "tts-1", "api_key_env": None},
                       cache=str(cache))


@pytest.mark.parametrize("bad", list(BAD_CLIPS), ids=list(BAD_CLIPS))
def test_a_reply_that_is_not_audio_is_asked_again_and_never_cached(bad: str, speech,
                                                                   tmp_path) -> None:
    server = speech(lambda voice, n: BAD_CLIPS[bad] if n == 1 else wav())
    made = make_stimuli(CELLS, block(server.url, tmp_path / "cache"), tmp_path / "run")
    assert server.voices == ["alloy", "alloy", "nova"]          # the first asked twice
    assert [s.seconds for s in made] == [0.5, 0.5]
    assert all(tts.usable(p) for p in (tmp_path / "cache").glob("*.wav"))


def test_a_server_that_keeps_answering_junk_is_one_line_and_keeps_the_clips_received(
        speech, tmp_path) -> None:
    server = speech(lambda voice, n: wav() if voice == "alloy" else HTML)
    with pytest.raises(ServerError) as err:
        make_stimuli(CELLS, block(server.url, tmp_path / "cache"), tmp_path / "run")
    message = str(err.value)
    assert message.startswith(f"{server.url}/audio/speech: voice 'nova': the reply: ")
    assert "without a RIFF/WAVE header" in message and f"after {tts.RETRIES} retries" in message
    assert "\n" not in message and "Bad Gateway" not in message
    assert server.voices.count("nova") == tts.RETRIES + 1
    kept = list((tmp_path / "cache").glob("*.wav"))
    assert len(kept) == 1 and tts.usable(kept[0])               # alloy's clip, nothing of nova's


def test_a_cached_clip_that_is_not_audio_is_dropped_and_asked_again(speech, tmp_path,
                                                                    caplog) -> None:
    """What an earlier release left: the server's error page, cached as nova's clip."""
    server = speech(lambda voice, n: wav())
    spec = ServerSpec.of({"base_url": server.url, "model": "tts-1", "api_key_env": None},
                         "probe.audio.server")
    cache = tmp_path / "cache"
    cache.mkdir()
    spoilt = cache / f"{tts.clip_key(CELLS[1].utterance, 'nova', 'tts-1', server.url)}.wav"
    spoilt.write_bytes(HTML)
    with caplog.at_level(logging.WARNING, logger="benevaudit.probes"):
        made = make_stimuli(CELLS, block(server.url, cache), tmp_path / "run")
    assert server.voices == ["alloy", "nova"] and made[1].path == str(spoilt.resolve()) and tts.usable(spoilt)
    assert f"{spoilt}: a cached clip that is not a readable WAV; dropped" in caplog.text
    make_stimuli(CELLS, block(server.url, cache), tmp_path / "run2")
    assert len(server.voices) == 2                                # both cached now
    assert tts.usable(tts.cached_clip(cache, spec, CELLS[1].utterance, "nova", lambda: None))
