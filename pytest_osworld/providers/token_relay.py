"""A loopback HTTP relay that adds the guest's bearer token: OSWorld-style clients reach us.

OSWorld's own client code (its ``PythonController`` and ``SetupController``) talks plain
HTTP to ``http://<vm_ip>:5000`` with no credentials. Our guest server listens on a unix
socket inside the sandbox and answers only requests carrying ``Authorization: Bearer
<token>``. :class:`TokenRelay` bridges the two for tools that must use such a client (the
end-to-end parity harness): it listens on ``127.0.0.1:<port>`` only, forwards each request
to the current guest socket and adds the token. The token is never turned off: a request
reaches the guest only through this process, which holds the token, and only from the
loopback interface.

The target is a callable so one relay survives desktop restores: it is asked for the
current ``(socket path, token)`` on every request.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Headers that describe one hop and are not forwarded (RFC 9110 section 7.6.1).
HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "authorization",
        "host",
        "content-length",
    }
)

Target = Callable[[], "tuple[str, str] | None"]


class _UnixConnection(http.client.HTTPConnection):
    """An HTTP connection over a unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        """Open the unix socket instead of a TCP connection."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class _Handler(BaseHTTPRequestHandler):
    """Forwards any method to the guest with the token added."""

    protocol_version = "HTTP/1.1"
    server: _RelayServer

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: the relay is plumbing, the guest keeps its own log."""

    def _forward(self) -> None:
        target = self.server.target()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if target is None:
            self._reply(503, b"no desktop is running behind this relay")
            return
        path, token = target
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        headers["Authorization"] = f"Bearer {token}"
        headers["Content-Length"] = str(len(body))
        conn = _UnixConnection(path, self.server.timeout_s)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError as exc:
            self._reply(502, f"guest unreachable: {type(exc).__name__}".encode())
            return
        finally:
            conn.close()
        self.send_response(resp.status, resp.reason)
        for key, value in resp.getheaders():
            if key.lower() not in HOP_HEADERS:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _reply(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _forward


class _RelayServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, target: Target, timeout_s: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.target = target
        self.timeout_s = timeout_s


class TokenRelay:
    """``127.0.0.1:<port>`` relayed to the guest's unix socket with the bearer token added.

    ``target`` returns the current guest socket path and token, or None when no desktop
    is running (the relay then answers 503). ``timeout`` bounds one forwarded request
    (OSWorld's setup steps may run for minutes, so the default is generous).
    """

    def __init__(self, target: Target, timeout: float = 600.0) -> None:
        self._server = _RelayServer(target, timeout)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="osworld-token-relay", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """The relay's base URL, e.g. ``http://127.0.0.1:40123``."""
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop listening and wait for the serving thread."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5.0)

    def __enter__(self) -> TokenRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
