"""The guest server's HTTP transport: connections, timeouts, body limits and sockets.

Owns the request handler (reads one request with bounded waits, refuses unauthorized or
ambiguous bodies before reading them, hands the request to the app and writes its
response), the threading server on a unix socket (mode 0600) or loopback TCP, and
:func:`serve`. What a request does is the app's business
(:class:`pytest_osworld.guest.server.GuestApp`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import socketserver
import stat
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from pytest_osworld.guest.server_protocol import HTTPError, Request, Response
from pytest_osworld.guest.vnc import VNC_UPGRADE

if TYPE_CHECKING:
    from pytest_osworld.guest.server import GuestApp

#: Largest request body accepted (uploads of task files).
MAX_BODY = 1 << 31

#: The most of an unauthorized request's body that is read (and dropped) before the 401.
UNAUTHORIZED_DRAIN = 64 * 1024
#: Seconds a kept-alive connection may sit idle between requests before it is closed.
IDLE_TIMEOUT = 3600.0
#: Seconds a started request may go without sending a byte (request line, headers or
#: body) before its connection is dropped: a slow or stalled client holds only its own
#: thread, and not for long.
REQUEST_TIMEOUT = 60.0


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, hands it to the app, writes its response."""

    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "pytest-osworld-guest"
    sys_version = ""

    def handle_one_request(self) -> None:
        """Wait up to the idle timeout for a request to start, then bound its reads.

        A connection that stays silent is closed after ``server.idle_timeout``; once the
        first byte of a request arrives, every read of it must make progress within
        ``server.request_timeout`` (the base class drops the connection on a timeout).
        """
        self.connection.settimeout(self.server.idle_timeout)
        try:
            started = self.rfile.peek(1)  # type: ignore[attr-defined]
        except (TimeoutError, OSError):
            started = b""
        if not started:
            self.close_connection = True
            return
        self.connection.settimeout(self.server.request_timeout)
        super().handle_one_request()

    def _dispatch(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        headers = {key.lower(): value for key, value in self.headers.items()}
        app = self.server.app
        if not app.authorized(headers.get("authorization")):
            # Refuse without reading a large body; a small one is drained first, so a client
            # still sending it reads the 401 instead of a broken pipe.
            declared = headers.get("content-length", "0")
            if declared.isdigit() and 0 < int(declared) <= UNAUTHORIZED_DRAIN:
                self.rfile.read(int(declared))
            self._send(app.handle(Request(self.command, parsed.path, headers)), close=True)
            return
        upgrade = headers.get("upgrade", "").lower()
        if self.command == "GET" and parsed.path == "/vnc" and upgrade == VNC_UPGRADE:
            self._bridge_vnc()
            return
        length_text = headers.get("content-length", "0")
        if len(set(self.headers.get_all("Content-Length") or [])) > 1:
            # Two different lengths: which one the body follows is ambiguous (request smuggling).
            self._send(
                Response.of_json({"status": "error", "message": "conflicting Content-Length headers"}, 400),
                close=True,
            )
            return
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._send(
                Response.of_json({"status": "error", "message": "chunked bodies are not supported"}, 411),
                close=True,
            )
            return
        try:
            length = int(length_text)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            reason = (
                f"bad Content-Length {length_text[:40]!r}: give the body's size in bytes, at most {MAX_BODY}"
            )
            status = 413 if length > MAX_BODY else 400
            self._send(Response.of_json({"status": "error", "message": reason}, status), close=True)
            return
        body = self.rfile.read(length) if length else b""
        self._send(app.handle(Request(self.command, parsed.path, headers, body)))

    def _bridge_vnc(self) -> None:
        """``GET /vnc`` with ``Upgrade: osworld-vnc``: ``101``, then bytes both ways with x11vnc.

        The bridge ends when either side closes; the connection is not reused."""
        self.close_connection = True
        try:
            upstream = self.server.app.vnc.connect()
        except HTTPError as exc:
            self._send(Response.of_json({"status": "error", "message": exc.reason}, exc.status), close=True)
            return
        except OSError as exc:
            reason = f"cannot reach x11vnc: {exc}"
            self._send(Response.of_json({"status": "error", "message": reason}, 503), close=True)
            return
        head = f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: {VNC_UPGRADE}\r\nConnection: Upgrade\r\n\r\n"
        self.wfile.write(head.encode())
        self.wfile.flush()
        self.connection.settimeout(None)

        def downstream() -> None:
            with contextlib.suppress(OSError):
                while data := upstream.recv(1 << 16):
                    self.connection.sendall(data)
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        thread = threading.Thread(target=downstream, name="vnc-bridge", daemon=True)
        thread.start()
        try:
            with contextlib.suppress(OSError, ValueError):
                # rfile, not the socket: it may hold bytes sent right after the headers.
                while data := self.rfile.read1(1 << 16):
                    upstream.sendall(data)
        finally:
            with contextlib.suppress(OSError):
                upstream.shutdown(socket.SHUT_RDWR)
            thread.join(timeout=5)
            upstream.close()

    def _send(self, response: Response, close: bool = False) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for key, value in response.headers.items():
            self.send_header(key, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = _dispatch
    do_POST = _dispatch
    do_PUT = _dispatch
    do_DELETE = _dispatch
    # Methods no route uses still get an authorized 405 naming the right one (not a 501).
    do_HEAD = _dispatch
    do_PATCH = _dispatch
    do_OPTIONS = _dispatch

    def address_string(self) -> str:
        """The peer, readable for unix sockets too."""
        return str(self.client_address[0]) if self.client_address else "unix"

    def log_message(self, format: str, *args: Any) -> None:
        """Access log to stderr (the session log), one line per request."""
        if self.server.verbose:
            sys.stderr.write(f"guest: {self.address_string()} {format % args}\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 refuses a unix-socket connect (EAGAIN) as soon as a
    # busy accept loop falls behind a burst of connections (a pool of clients, a slow-header
    # attack); the kernel's own cap (somaxconn) still applies.
    request_queue_size = 128
    app: GuestApp
    verbose: bool = False
    idle_timeout: float = IDLE_TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Report a request that raised: a client that hung up before its answer is routine.

        Such a client (an interrupted run, a timed-out caller) costs one line in verbose mode,
        not a traceback in the desktop's log; anything else keeps the standard traceback.
        """
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            if self.verbose:
                name = type(error).__name__
                sys.stderr.write(f"guest: the client hung up before its answer was sent ({name})\n")
            return
        super().handle_error(request, client_address)


class _UnixServer(_Server):
    address_family = socket.AF_UNIX

    def server_bind(self) -> None:
        """Bind the socket so that only its owner can ever connect (mode 0600).

        A stale socket at the path is replaced; any other kind of file there is refused
        rather than deleted. The umask is tightened around ``bind`` so the socket never
        exists with wider permissions, even for an instant.
        """
        path = str(self.server_address)
        if os.path.lexists(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise OSError(f"{path} exists and is not a socket; refusing to replace it")
            os.unlink(path)
        old_umask = os.umask(0o177)
        try:
            socketserver.TCPServer.server_bind(self)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        self.server_name = "guest"
        self.server_port = 0


def make_server(
    app: GuestApp, *, unix_socket: str | None = None, host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    """A bound (not yet serving) HTTP server for ``app``, on a unix socket or TCP."""
    server: _Server
    if unix_socket is not None:
        server = _UnixServer(unix_socket, _Handler)  # type: ignore[arg-type]
    else:
        server = _Server((host, port), _Handler)
    server.app = app
    return server


def serve(app: GuestApp, server: ThreadingHTTPServer) -> None:
    """Serve until SIGTERM or SIGINT; the worker is stopped on the way out."""

    def _stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    app.start_warming()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.worker.close()
        app.vnc.close()
