"""The transport of the guest client: HTTP over a unix socket or TCP, kept alive.

Owns :class:`GuestTransport`: one kept-alive :mod:`http.client` connection (replaced when
it sat idle too long), the bearer token, per-request timeouts, bounded retries of
idempotent calls on connection errors and 5xx answers, and the size limit of an answer.
Every failure raises :class:`~pytest_osworld.errors.GuestError` (or its subclass
:class:`~pytest_osworld.errors.GuestUnreachable`) naming the endpoint and the reason.
The OSWorld endpoints on top of it are :class:`pytest_osworld.guest_client.client.GuestClient`'s.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osworld.errors import GuestError, GuestUnreachable

#: Default per-request timeout (seconds) for quick calls.
DEFAULT_TIMEOUT = 30.0
#: Attempts for idempotent calls; the pause between attempts doubles from ``RETRY_DELAY``.
RETRIES = 3
RETRY_DELAY = 0.2
#: Extra seconds allowed on top of a command's own timeout.
SLACK = 15.0
#: The largest answer read from a guest (a screenshot is a few MB, a recording or a file
#: fetched for evaluation at most a few hundred); a larger one is refused, unread.
MAX_RESPONSE_BYTES = 2 << 30
#: A kept-alive connection unused for longer than this is replaced by a new one before the
#: next request. The guest closes connections idle for an hour (a proxy may do so sooner),
#: and a request sent into a connection the other side has just closed fails without being
#: read; it may only be re-sent when it is idempotent, so an agent's action would be lost.
REUSE_IDLE_S = 60.0


class _UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection over a unix-domain socket."""

    def __init__(self, socket_path: str, timeout: float) -> None:
        super().__init__("guest", timeout=timeout)
        self._socket_path = socket_path

    def connect(self) -> None:
        """Connect to the socket path instead of a TCP address.

        A unix socket whose listen backlog is full refuses at once (EAGAIN) where TCP would
        wait; nothing has been sent yet, so connecting again is safe for every request, and
        is done until the timeout.
        """
        deadline = time.monotonic() + (self.timeout if self.timeout is not None else 30.0)
        pause = 0.01
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self._socket_path)
            except BlockingIOError:
                sock.close()
                if time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.2)
                continue
            except OSError:
                sock.close()
                raise
            self.sock = sock
            return


@dataclass(frozen=True)
class Reply:
    """One answer of the guest: status, body and media type."""

    status: int
    body: bytes
    content_type: str

    def json(self, endpoint: str) -> Any:
        """The body as JSON; :class:`GuestError` naming ``endpoint`` when it is not."""
        try:
            return json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GuestError(f"guest {endpoint}: answer is not JSON: {self.body[:200]!r}") from exc


class _TooLarge(Exception):
    """An answer over ``max_response_bytes`` (internal; surfaces as :class:`GuestError`)."""


def _reason(reply: Reply) -> str:
    try:
        value = json.loads(reply.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return reply.body[:300].decode("utf-8", "replace").strip()
    if isinstance(value, dict):
        return str(value.get("message") or value.get("error") or value)
    return str(value)


class GuestTransport:
    """Requests to one guest server, over one kept-alive connection.

    Give exactly one of ``unix_socket`` (a path) or ``url`` (``http://host:port``).
    ``token`` is sent as ``Authorization: Bearer``; leave it None for an OSWorld VM.
    """

    def __init__(
        self,
        *,
        unix_socket: str | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = RETRIES,
    ) -> None:
        if (unix_socket is None) == (url is None):
            raise ValueError("give exactly one of unix_socket= or url=")
        self._unix_socket = unix_socket
        self._host = ""
        self._port = 0
        if url is not None:
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme != "http" or not parsed.hostname:
                raise ValueError(f"guest url must look like http://host:port, got {url!r}")
            self._host = parsed.hostname
            self._port = parsed.port or 80
        self._token = token
        self.timeout = timeout
        self.retries = max(1, retries)
        #: Answers larger than this many bytes raise :class:`GuestError` (see ``MAX_RESPONSE_BYTES``).
        self.max_response_bytes = MAX_RESPONSE_BYTES
        #: Seconds a kept-alive connection may sit unused and still be reused (``REUSE_IDLE_S``).
        self.reuse_idle_s = REUSE_IDLE_S
        self._conn: http.client.HTTPConnection | None = None
        self._last_used = 0.0
        # One request at a time on the kept-alive connection (the live view's thread too).
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = self._unix_socket or f"http://{self._host}:{self._port}"
        return f"{type(self).__name__}({where})"

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._conn is not None and time.monotonic() - self._last_used > self.reuse_idle_s:
            self.close()
        if self._conn is None:
            if self._unix_socket is not None:
                self._conn = _UnixHTTPConnection(self._unix_socket, timeout)
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        self._conn.timeout = timeout
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout)
        return self._conn

    def upgrade(
        self, endpoint: str, protocol: str, timeout: float | None = None
    ) -> tuple[socket.socket, bytes]:
        """A new connection switched to ``protocol`` by ``GET endpoint`` (``101``).

        Returns the socket, blocking with no timeout, and the bytes that came after the
        answer's headers. Any other answer raises :class:`GuestError` with its reason.
        """
        limit = self.timeout if timeout is None else timeout
        conn: http.client.HTTPConnection
        if self._unix_socket is not None:
            conn = _UnixHTTPConnection(self._unix_socket, limit)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=limit)
        try:
            conn.connect()
        except OSError as exc:
            raise GuestUnreachable(f"guest {endpoint}: cannot connect ({self!r}): {exc}") from exc
        sock, conn.sock = conn.sock, None
        lines = [f"GET {endpoint} HTTP/1.1", "Host: guest", f"Upgrade: {protocol}", "Connection: Upgrade"]
        if self._token:
            lines.append(f"Authorization: Bearer {self._token}")
        received = b""
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            while b"\r\n\r\n" not in received:
                data = sock.recv(4096)
                if not data or len(received) > 65536:
                    break
                received += data
        except OSError as exc:
            sock.close()
            raise GuestUnreachable(f"guest {endpoint}: {type(exc).__name__}: {exc}") from exc
        head, _, rest = received.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        if status != 101:
            sock.close()
            reason = _reason(Reply(status, rest, "")) if rest else status_line or "no answer"
            raise GuestError(f"guest {endpoint}: HTTP {status}: {reason}", status=status or None)
        sock.settimeout(None)
        return sock, rest

    def close(self) -> None:
        """Close the kept-alive connection (a new one opens on the next call)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _once(
        self,
        method: str,
        endpoint: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float,
    ) -> Reply:
        conn = self._connection(timeout)
        try:
            conn.request(method, endpoint, body=body, headers=headers)
            response = conn.getresponse()
            declared = response.getheader("Content-Length", "")
            if declared.strip().isdigit() and int(declared) > self.max_response_bytes:
                raise _TooLarge(f"it declares {int(declared)} bytes")
            data = response.read(self.max_response_bytes + 1)
            if len(data) > self.max_response_bytes:
                raise _TooLarge("it sent more than that")
        except _TooLarge as exc:
            self.close()
            raise GuestError(
                f"guest {endpoint}: the answer is larger than the client's limit of "
                f"{self.max_response_bytes} bytes ({exc}); raise GuestClient.max_response_bytes "
                "if such answers are expected"
            ) from None
        except BaseException:
            self.close()
            raise
        self._last_used = time.monotonic()
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return Reply(response.status, data, response.getheader("Content-Type", ""))

    def request(
        self,
        method: str,
        endpoint: str,
        *,
        json_body: Any = None,
        form: Mapping[str, str] | None = None,
        raw: tuple[bytes, str] | None = None,
        timeout: float | None = None,
        idempotent: bool = False,
        ok: tuple[int, ...] = (200,),
    ) -> Reply:
        """Send one request; retry connection failures when ``idempotent``.

        Raises :class:`GuestError` for a status outside ``ok`` or when the guest does not
        answer; the message names the endpoint and the reason.
        """
        headers: dict[str, str] = {}
        body: bytes | None = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            body = urllib.parse.urlencode(dict(form)).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif raw is not None:
            body, headers["Content-Type"] = raw
        if body is not None or method == "POST":
            headers["Content-Length"] = str(len(body or b""))
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        limit = self.timeout if timeout is None else timeout
        attempts = self.retries if idempotent else 1
        delay = RETRY_DELAY
        last: BaseException | None = None
        for attempt in range(attempts):
            try:
                with self._lock:
                    reply = self._once(method, endpoint, body, headers, limit)
            except (ConnectionError, FileNotFoundError, http.client.HTTPException) as exc:
                last = exc
            except TimeoutError as exc:
                raise GuestUnreachable(f"guest {endpoint}: no answer within {limit:g} s ({self!r})") from exc
            except OSError as exc:
                last = exc
            else:
                if reply.status in ok:
                    return reply
                if reply.status == 401:
                    raise GuestError(f"guest {endpoint}: 401 unauthorized (wrong or missing token)")
                if reply.status >= 500 and idempotent and attempt + 1 < attempts:
                    last = GuestError(f"HTTP {reply.status}: {_reason(reply)}")
                else:
                    raise GuestError(
                        f"guest {endpoint}: HTTP {reply.status}: {_reason(reply)}", status=reply.status
                    )
            if attempt + 1 < attempts:
                time.sleep(delay)
                delay *= 2
        raise GuestUnreachable(
            f"guest {endpoint}: failed after {attempts} attempt(s) ({self!r}): {type(last).__name__}: {last}"
        ) from last
