"""The token relay: loopback TCP in, the guest's unix socket out, with our bearer token."""

from __future__ import annotations

import json
import socketserver
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pytest_osworld.providers.token_relay import TokenRelay


class _Echo(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _echo(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps(
            {
                "auth": self.headers.get("Authorization"),
                "path": self.path,
                "method": self.command,
                "body": body.decode(),
            }
        ).encode()
        self.send_response(201)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _echo


class _UnixHTTP(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def get_request(self):  # type: ignore[no-untyped-def]
        conn, _ = super().get_request()
        return conn, ("local", 0)


@pytest.fixture
def guest_socket(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "g.sock")
    server = _UnixHTTP(path, _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield path
    server.shutdown()
    server.server_close()


def _call(url: str, data: bytes | None = None, auth: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data)
    if auth:
        req.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_relay_adds_the_token_and_replaces_a_client_one(guest_socket: str) -> None:
    with TokenRelay(lambda: (guest_socket, "s3cret")) as relay:
        status, body = _call(relay.url + "/execute?x=1", b'{"command": "ls"}', auth="Bearer forged")
    seen = json.loads(body)
    assert status == 201
    assert seen == {
        "auth": "Bearer s3cret",
        "path": "/execute?x=1",
        "method": "POST",
        "body": '{"command": "ls"}',
    }


def test_relay_without_a_desktop_answers_503() -> None:
    with TokenRelay(lambda: None) as relay:
        status, body = _call(relay.url + "/screenshot")
    assert status == 503
    assert b"no desktop" in body


def test_relay_listens_on_loopback_only(guest_socket: str) -> None:
    with TokenRelay(lambda: (guest_socket, "t")) as relay:
        assert relay.url.startswith("http://127.0.0.1:")
