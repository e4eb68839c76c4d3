"""A stdlib HTTP server on 127.0.0.1 that answers each POST with whatever bytes a test gives:
a whole chat completion, a torn one, an error page. Used by the tests of malformed replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (request path, request body, call number from 1) -> (status, content type, body bytes)
Answer = Callable[[str, dict[str, Any], int], tuple[int, str, bytes]]


def completion(content: Any = "ok", **message: Any) -> dict[str, Any]:
    """A ``ChatCompletion`` as the protocol defines it; ``message`` adds or replaces fields."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content, **message}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


def as_json(reply: Any) -> tuple[int, str, bytes]:
    return 200, "application/json", json.dumps(reply).encode()


# a 16-bit mono WAV of 8 silent frames at 8 kHz, as a spoken reply's base64 data
SILENT_WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"


def echo(path: str, body: dict[str, Any], n: int) -> tuple[int, str, bytes]:
    """A healthy server: the last user turn, upper-cased; spoken too (silence, its transcript
    the text) where the request asks for audio, as an audio model answers."""
    text = str(body["messages"][-1]["content"]).upper()
    if "audio" in (body.get("modalities") or []):
        return as_json(completion(text, audio={"id": "a1", "data": SILENT_WAV, "expires_at": 1,
                                               "transcript": text}))
    return as_json(completion(text))


class RawServer:
    """A threading HTTP server; records every request body."""

    def __init__(self, answer: Answer) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.bodies.append(body)
                    n = len(outer.bodies)
                status, kind, data = answer(self.path, body, n)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
