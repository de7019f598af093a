"""A local HTTP server that answers like a model provider, from recorded responses.

Each test scripts the exchanges it expects: a list of recordings (files under
``recordings/``, or inline dicts) played in order, one per request. A recording is
``{"status": 200, "headers": {...}, "body": {...}, "delay": 0.0}``. Every request is
kept (method, path, query, headers, parsed JSON body) for the test to inspect.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: The fake API key of the agent tests; no recorded output may ever contain it.
FAKE_KEY = "sk-test-DISTINCTIVE-7f3a9c2e51b8"

RECORDINGS = Path(__file__).parent / "unit" / "agents" / "recordings"


def recording(name: str) -> dict[str, Any]:
    """Load ``recordings/<name>.json``."""
    return json.loads((RECORDINGS / f"{name}.json").read_text())


def with_text(name: str, text: str) -> dict[str, Any]:
    """A recorded 200 answer whose model text is replaced by ``text``.

    Works for the three providers' shapes, so one recording serves many answers.
    """
    rec = recording(name)
    body = rec["body"]
    if "content" in body and body.get("type") == "message":  # Anthropic Messages
        body["content"] = [{"type": "text", "text": text}]
    elif "choices" in body:  # OpenAI Chat Completions
        body["choices"][0]["message"]["content"] = text
    elif "candidates" in body:  # Gemini generateContent
        body["candidates"][0]["content"]["parts"] = [{"text": text}]
    else:
        raise ValueError(f"recording {name} has no model text to replace")
    return rec


@dataclass
class Captured:
    """One request as the server received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class ProviderServer:
    """The server's state: what to answer next and what was asked."""

    script: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Captured] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def play(self, *recordings: dict[str, Any]) -> None:
        """Queue recordings to answer the next requests with."""
        self.script.extend(recordings)


def _handler(state: ProviderServer) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = raw.decode(errors="replace")
            parts = urlsplit(self.path)
            with lock:
                state.requests.append(
                    Captured(
                        self.command,
                        parts.path,
                        parts.query,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                rec = state.script.pop(0) if state.script else None
            if rec is None:
                rec = {
                    "status": 599,
                    "body": {"error": {"message": "test server: no recording left"}},
                }
            if rec.get("delay"):
                time.sleep(rec["delay"])
            payload = json.dumps(rec.get("body", {})).encode()
            try:
                self.send_response(rec.get("status", 200))
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for key, value in rec.get("headers", {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        do_POST = _answer
        do_GET = _answer

    return Handler


def start(state: ProviderServer) -> ThreadingHTTPServer:
    """Serve ``state`` on 127.0.0.1 in a daemon thread; the caller shuts it down."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server
