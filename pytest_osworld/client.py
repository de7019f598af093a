"""The host-side client of the guest API, over a unix socket or TCP.

:class:`GuestClient` implements :class:`pytest_osworld.guest_api.Guest` on top of
:mod:`http.client`: our own guest server (token required) and an unmodified OSWorld VM
server (no token, port 5000) speak the same endpoints. Every failure raises
:class:`~pytest_osworld.errors.GuestError` naming the endpoint and the reason; idempotent
calls (observations, reads) are retried a bounded number of times on connection errors.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.parse
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osworld.errors import GuestError, GuestUnreachable
from pytest_osworld.guest_api import CommandResult

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
class _Reply:
    status: int
    body: bytes
    content_type: str

    def json(self, endpoint: str) -> Any:
        try:
            return json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GuestError(f"guest {endpoint}: answer is not JSON: {self.body[:200]!r}") from exc


class _TooLarge(Exception):
    """An answer over ``max_response_bytes`` (internal; surfaces as :class:`GuestError`)."""


def _reason(reply: _Reply) -> str:
    try:
        value = json.loads(reply.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return reply.body[:300].decode("utf-8", "replace").strip()
    if isinstance(value, dict):
        return str(value.get("message") or value.get("error") or value)
    return str(value)


class GuestClient:
    """A :class:`~pytest_osworld.guest_api.Guest` over HTTP.

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

    def __repr__(self) -> str:
        where = self._unix_socket or f"http://{self._host}:{self._port}"
        return f"GuestClient({where})"

    # -- transport ---------------------------------------------------------------------------

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
    ) -> _Reply:
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
        return _Reply(response.status, data, response.getheader("Content-Type", ""))

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
    ) -> _Reply:
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

    # -- the Guest protocol ------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """Readiness of X, the window manager, AT-SPI and the worker."""
        value = self.request("GET", "/health", timeout=10.0).json("/health")
        if not isinstance(value, dict):
            raise GuestError(f"guest /health: unexpected answer {value!r}")
        return value

    def screenshot(self) -> bytes:
        """The screen as PNG bytes (cursor drawn in)."""
        reply = self.request("GET", "/screenshot", idempotent=True)
        if not reply.body.startswith(b"\x89PNG") and not reply.body.startswith(b"\xff\xd8"):
            raise GuestError(f"guest /screenshot: not an image ({reply.content_type})")
        return reply.body

    def accessibility_tree(self) -> str:
        """OSWorld's a11y XML."""
        value = self.request("GET", "/accessibility", idempotent=True, timeout=120.0)
        tree = value.json("/accessibility")
        if not isinstance(tree, dict) or not isinstance(tree.get("AT"), str):
            raise GuestError("guest /accessibility: answer has no 'AT' string")
        return str(tree["AT"])

    def terminal_output(self) -> str | None:
        """Focused terminal text, or None."""
        value = self.request("GET", "/terminal", idempotent=True).json("/terminal")
        output = value.get("output") if isinstance(value, dict) else None
        return output if isinstance(output, str) else None

    def _command_result(self, endpoint: str, value: Any, code_key: str) -> CommandResult:
        if not isinstance(value, dict):
            raise GuestError(f"guest {endpoint}: unexpected answer {value!r}")
        code = value.get(code_key)
        return CommandResult(
            returncode=int(code) if isinstance(code, int) else -1,
            output=str(value.get("output") or ""),
            error=str(value.get("error") or ""),
        )

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        """Run a command and wait for it."""
        reply = self.request(
            "POST",
            "/setup/execute",
            json_body={"command": command, "shell": shell, "timeout": timeout},
            timeout=timeout + SLACK,
        )
        return self._command_result("/setup/execute", reply.json("/setup/execute"), "returncode")

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        """Start a command without waiting for it."""
        self.request("POST", "/setup/launch", json_body={"command": command, "shell": shell})

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        """Run code in the guest's pyautogui worker."""
        reply = self.request(
            "POST",
            "/run_python",
            json_body={"code": code, "timeout": timeout},
            timeout=timeout + SLACK,
        )
        return self._command_result("/run_python", reply.json("/run_python"), "return_code")

    def run_bash_script(
        self, script: str, timeout: float = 100.0, working_dir: str | None = None
    ) -> CommandResult:
        """Run a bash script (stderr merged into output)."""
        payload: dict[str, Any] = {"script": script, "timeout": timeout}
        if working_dir is not None:
            payload["working_dir"] = working_dir
        reply = self.request("POST", "/run_bash_script", json_body=payload, timeout=timeout + SLACK)
        return self._command_result("/run_bash_script", reply.json("/run_bash_script"), "returncode")

    def open_file(self, path: str, timeout: float = 120.0) -> None:
        """Open a file and wait for its window."""
        self.request(
            "POST",
            "/setup/open_file",
            json_body={"path": path, "timeout": timeout},
            timeout=timeout + SLACK,
        )

    def activate_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Focus a window by title or class."""
        self.request(
            "POST",
            "/setup/activate_window",
            json_body={"window_name": window_name, "strict": strict, "by_class": by_class},
        )

    def close_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Close a window by title or class."""
        self.request(
            "POST",
            "/setup/close_window",
            json_body={"window_name": window_name, "strict": strict, "by_class": by_class},
        )

    def read_file(self, path: str) -> bytes:
        """A file's bytes; ``FileNotFoundError`` when the guest has no such file."""
        reply = self.request(
            "POST",
            "/file",
            form={"file_path": path},
            idempotent=True,
            timeout=120.0,
            ok=(200, 404),
        )
        if reply.status == 404:
            raise FileNotFoundError(f"{path} does not exist in the environment")
        return reply.body

    def upload_file(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` in the guest (multipart, as OSWorld sends it)."""
        boundary = uuid.uuid4().hex
        name = os.path.basename(path) or "file"
        body = b"".join(
            [
                f'--{boundary}\r\nContent-Disposition: form-data; name="file_path"\r\n\r\n'.encode(),
                path.encode(),
                f"\r\n--{boundary}\r\n".encode(),
                f'Content-Disposition: form-data; name="file_data"; filename="{name}"\r\n'.encode(),
                b"Content-Type: application/octet-stream\r\n\r\n",
                data,
                f"\r\n--{boundary}--\r\n".encode(),
            ]
        )
        self.request(
            "POST",
            "/setup/upload",
            raw=(body, f"multipart/form-data; boundary={boundary}"),
            timeout=600.0,
            idempotent=True,
        )

    def list_directory(self, path: str) -> dict[str, Any]:
        """The directory tree at ``path``."""
        value = self.request("POST", "/list_directory", json_body={"path": path}, idempotent=True).json(
            "/list_directory"
        )
        tree = value.get("directory_tree") if isinstance(value, dict) else None
        if not isinstance(tree, dict):
            raise GuestError("guest /list_directory: answer has no 'directory_tree'")
        return tree

    def screen_size(self) -> tuple[int, int]:
        """Screen width and height."""
        value = self.request("POST", "/screen_size", idempotent=True).json("/screen_size")
        return int(value["width"]), int(value["height"])

    def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """Size of the first window of a WM class, or None."""
        reply = self.request(
            "POST",
            "/window_size",
            form={"app_class_name": app_class_name},
            idempotent=True,
            ok=(200, 404),
        )
        if reply.status == 404:
            return None
        value = reply.json("/window_size")
        if not isinstance(value, dict):
            return None
        return int(value["width"]), int(value["height"])

    def cursor_position(self) -> tuple[int, int]:
        """The mouse position."""
        value = self.request("GET", "/cursor_position", idempotent=True).json("/cursor_position")
        return int(value[0]), int(value[1])

    def desktop_path(self) -> str:
        """The desktop folder."""
        value = self.request("POST", "/desktop_path", idempotent=True).json("/desktop_path")
        return str(value["desktop_path"])

    def wallpaper(self) -> bytes:
        """The wallpaper file's bytes."""
        return self.request("POST", "/wallpaper", idempotent=True).body

    def start_recording(self) -> None:
        """Start a screen recording."""
        self.request("POST", "/start_recording")

    def end_recording(self) -> bytes:
        """Stop the recording and return the MP4."""
        return self.request("POST", "/end_recording", timeout=60.0).body

    def platform(self) -> str:
        """``Linux`` (OSWorld's ``/platform``)."""
        return self.request("GET", "/platform", idempotent=True).body.decode().strip()
